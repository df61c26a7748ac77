"""Where bundled data lives."""

from __future__ import annotations

from pathlib import Path

from cachegraph import seeds
from cachegraph.graph import MirrorSource
from cachegraph.graph.sources.mirrors import mirrors_file


def bundled() -> Path:
    """The bundled data's folder: the package ``cachegraph.seeds`` (``seeds/`` of the
    checkout; see its README.md), wherever it is installed."""
    return Path(seeds.__file__).resolve().parent


def default_data() -> Path:
    """The bundled seed pages (four real cache pages of the tag ``develop``)."""
    return bundled() / "pages"


def default_mirrors() -> list[MirrorSource]:
    """The bundled mirrors, as ``seeds/mirrors.yaml`` lists them: real Spack build-cache
    metadata with dependency DAGs, served beside the seed pages when no data is given."""
    return mirrors_file(bundled() / "mirrors.yaml")


def default_lockfile() -> Path:
    """The bundled ``spack.lock``: a real environment the bundled mirrors partly hold."""
    return bundled() / "spack.lock"
