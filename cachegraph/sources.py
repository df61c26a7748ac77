"""Where bundled data lives."""

from __future__ import annotations

from pathlib import Path


def default_data() -> Path:
    """The bundled seed pages, served when no data is given.

    Installed, they are the package ``cachegraph.seeds`` (a folder inside this one);
    in a checkout, ``seeds/`` beside this package.
    """
    here = Path(__file__).resolve().parent
    installed = here / "seeds"
    return installed if installed.is_dir() else here.parent / "seeds"
