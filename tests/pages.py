"""Write small cache pages in the public site's format, for cases the real data lacks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path


def record(
    hash: str,
    stacks=("root",),
    *,
    compiler="gcc@=11.4.0",
    version="1.0",
    target="x86_64_v3",
    os="ubuntu22.04",
    variants=("build_system=cmake",),
) -> dict:
    return {
        "compiler": compiler,
        "hash": hash,
        "os": os,
        "platform": "linux",
        "size": "-",
        "stacks": list(stacks),
        "target": target,
        "variants": list(variants),
        "versions": [version],
    }


def page_text(package: str, tag: str, records: list, meta: dict | None = None) -> str:
    if meta is None:
        meta = {
            "num_specs": len(records),
            "num_specs_by_stack": dict(Counter(s for r in records for s in r["stacks"])),
        }
    return (
        f'---\ntitle: "{package}"\nlayout: cache\ncategories: [package, {tag}]\n'
        f"meta: {json.dumps(meta)}\nspec_details: {json.dumps(records)}\n---\n"
    )


def write_page(root: Path, package: str, tag: str, records: list, meta: dict | None = None) -> Path:
    path = root / tag / package / "specs.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page_text(package, tag, records, meta))
    return path


def fake_hash(seed: str) -> str:
    """A 32-character hash made from ``seed`` (letters a-z only), padded with 'a'."""
    return (seed + "a" * 32)[:32]
