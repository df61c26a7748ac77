"""Where bundled data lives."""

from __future__ import annotations

from pathlib import Path


def default_data() -> Path:
    """The bundled seed pages, served when no data is given.

    ``seeds/`` sits beside this package both in a checkout and once installed
    (it is installed as a top-level data folder).
    """
    return Path(__file__).resolve().parent.parent / "seeds"
