"""Where bundled data lives."""

from __future__ import annotations

from pathlib import Path

from cachegraph.graph import MirrorSource
from cachegraph.graph.sources.mirrors import mirrors_file


def bundled() -> Path:
    """The bundled data's folder (``seeds/``; see its README.md).

    Installed, it is the package ``cachegraph.seeds`` (a folder inside this one);
    in a checkout, ``seeds/`` beside this package.
    """
    here = Path(__file__).resolve().parent
    installed = here / "seeds"
    return installed if installed.is_dir() else here.parent / "seeds"


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
