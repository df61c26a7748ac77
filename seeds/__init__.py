"""The bundled data (see README.md beside this file): a package so that its folder is
found by import, installed or from the checkout (``cachegraph.sources.bundled``)."""
