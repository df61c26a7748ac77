"""An independent reading of cache pages for expected answers: plain JSON of each
front-matter line, no project code. Tests compare the server against it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tests.spackref import ALIASES


@dataclass
class RawPage:
    path: Path
    package: str
    tag: str
    meta: dict
    records: list[dict]


def read_raw_page(path: Path) -> RawPage | None:
    fields = {}
    for line in path.read_text().splitlines()[1:]:
        if line == "---":
            break
        key, _, value = line.partition(": ")
        fields[key] = value
    if "spec_details" not in fields:
        return None
    tag = fields["categories"].strip("[]").split(",")[1].strip()
    return RawPage(
        path,
        json.loads(fields["title"]),
        tag,
        json.loads(fields["meta"]),
        json.loads(fields["spec_details"]),
    )


def raw_pages(root: Path) -> list[RawPage]:
    pages = [read_raw_page(p) for p in sorted(root.rglob("*")) if p.suffix in (".md", ".txt")]
    return [p for p in pages if p is not None]


def normalized(compiler: str) -> str | None:
    return None if compiler == "none" else compiler.replace("@=", "@")


def current_name(compiler: str | None) -> str | None:
    """A normalized compiler under the package name Spack 1.1 gives it now
    (``LEGACY_COMPILER_TO_BUILTIN``): how the API lists compilers."""
    if compiler is None:
        return None
    family, at, version = compiler.partition("@")
    return ALIASES.get(family, family) + at + version


def spec_file_nodes(root: Path) -> list[dict]:
    """Every node of every spec-N.json under ``root``, as Spack wrote it."""
    return [
        n
        for f in sorted(root.rglob("spec-*.json"))
        for n in json.loads(f.read_text())["spec"]["nodes"]
    ]
