"""Write ``mirrors/mpigdb/build_cache/index.json`` (and its ``.hash``) from ``spack.lock``.

The bundled environment mirror holds, byte for byte, the concrete specs of the lockfile's
``mpi`` root and every dependency of it that is not external -- what ``spack buildcache
push`` of that root would have listed in the build cache's index (Spack pushes no
externals; the index still names them, as a dependency no mirror holds). The spec records
are the lockfile's own, unchanged; only their arrangement as a database (version 8, as
Spack >= 0.22 writes it) is made here. Run from this folder: ``python make_mirror.py``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
PUSHED_ROOT = "mpi"


def closure(specs: dict, root: str) -> list[str]:
    seen: list[str] = []
    todo = [root]
    while todo:
        hash = todo.pop()
        if hash in seen:
            continue
        seen.append(hash)
        todo.extend(d["hash"] for d in specs[hash].get("dependencies", []))
    return seen


def main() -> None:
    lock = json.loads((HERE / "spack.lock").read_text())
    specs = lock["concrete_specs"]
    root = next(r["hash"] for r in lock["roots"] if r["spec"] == PUSHED_ROOT)
    listed = closure(specs, root)
    parents = {h: 0 for h in listed}
    for hash in listed:
        for dep in specs[hash].get("dependencies", []):
            parents[dep["hash"]] += 1
    installs = {
        hash: {
            "spec": specs[hash],
            "ref_count": parents[hash],
            "in_buildcache": not specs[hash].get("external"),
        }
        for hash in sorted(listed)
    }
    index = json.dumps({"database": {"version": "8", "installs": installs}}, indent=None)
    out = HERE / "mirrors" / "mpigdb" / "build_cache"
    out.mkdir(parents=True, exist_ok=True)
    (out / "index.json").write_text(index)
    (out / "index.json.hash").write_text(hashlib.sha256(index.encode()).hexdigest())


if __name__ == "__main__":
    main()
