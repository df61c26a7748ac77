"""Spack's own rules, without Spack: names and version order, version ranges, archspec
targets, the spec syntax (``constraints``) and which specs satisfy it (``satisfies``)."""
