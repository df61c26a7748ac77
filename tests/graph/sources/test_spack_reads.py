"""What Spack reads from a mirror, and what it counts as cached, on real mirrors.

Each expected answer is worked out here from the raw files by Spack 1.1's rules
(``vjranagit/spack`` at ``releases/v1.1``), cited where used:

- ``Database._read_spec_from_dict`` (``lib/spack/spack/database.py``): a record whose
  ``spec`` has no ``name`` is the old form, ``{NAME: node}``, its hash the record's key;
  ``Database._assign_dependencies`` links a record's dependencies by the hashes they
  name, to other records of the index.
- ``SpecfileV1.load`` (``lib/spack/spack/spec.py``): a spec file of format 1 links each
  dependency to the file's node *of that name*; the hash it states is not used.
- ``BinaryCacheIndex._associate_built_specs_with_mirror``
  (``lib/spack/spack/binary_distribution.py``): a mirror holds the records of its index
  marked ``in_buildcache``; ``spack buildcache list`` lists those, and nothing else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, load
from cachegraph.graph.questions.specs import SpecQuery, select_specs

from cachegraph.cli import main
from tests.conftest import SHARED_MIRRORS
from tests.mirrors import raw_document, raw_index, raw_nodes


def _db5_mirror() -> Path | None:
    """The 2021 mirror of index database version 5 (the ``build_cache/`` of
    Paul-Ferrell/clingo-bootstrap: 82 records in the old node form, 59 ``.spec.yaml``
    files of format 1), wherever it lies in ../shared/mirrors; ``CACHEGRAPH_DB5_MIRROR``
    may name it elsewhere."""
    given = os.environ.get("CACHEGRAPH_DB5_MIRROR")
    candidates = [Path(given)] if given else []
    if SHARED_MIRRORS.is_dir():
        candidates += [p.parent.parent for p in sorted(SHARED_MIRRORS.glob("**/index.json"))]
    for root in candidates:
        index = root / "build_cache" / "index.json"
        if index.is_file() and json.loads(index.read_text())["database"]["version"] == "5":
            return root
    return None


@pytest.fixture(scope="module")
def db5() -> Path:
    root = _db5_mirror()
    if root is None:
        pytest.skip("no mirror of index database version 5 in ../shared/mirrors")
    return root


def _find(capsys, constraint: str, *sources: str) -> list[dict]:
    assert main(["find", constraint, "--json", *sources]) == 0
    return json.loads(capsys.readouterr().out)


# -- item 1: database version 5, spec format 1 ----------------------------------------------


def test_an_index_of_database_version_5_loads_every_record(db5):
    installs = raw_index(db5 / "build_cache")
    # Database._read_spec_from_dict: no "name" in the spec mapping -> {NAME: node}.
    names = {h: next(iter(entry["spec"])) for h, entry in installs.items()}
    held = {h for h, entry in installs.items() if entry["in_buildcache"]}
    assert (len(installs), len(held)) == (82, 59)
    graph, report = load([], [MirrorSource("2021", "bootstrap", db5)], processes=1)
    assert report.problems == []
    assert report.specs == 82
    assert {h: graph.spec(h).package for h in installs} == names
    holding = {s.hash for s in graph.all_specs() if "2021/bootstrap" in s.mirrors}
    assert holding == held


def test_database_version_5_links_dependencies_by_their_records(capsys, db5):
    installs = raw_index(db5 / "build_cache")
    # Database._assign_dependencies: each dependency is the record of the hash it names.
    roots = {
        h for h, entry in installs.items()
        if "clingo-bootstrap" in entry["spec"]
        and any(installs[d["hash"]]["spec"].keys() == {"python"}
                for d in entry["spec"]["clingo-bootstrap"]["dependencies"].values())
    }  # fmt: skip
    assert len(roots) == 23
    found = _find(capsys, "clingo-bootstrap ^python", f"--mirror=2021:bootstrap={db5}")
    assert {s["hash"] for s in found} == roots


def test_format_1_spec_files_link_dependencies_by_name(db5):
    files = sorted((db5 / "build_cache").glob("*.spec.yaml"))
    # SpecfileV1.load: a dependency is the node of its name in the same file.
    roots = set()
    for path in files:
        nodes = raw_nodes(raw_document(path))
        names = {n["name"] for n in nodes}
        if nodes[0]["name"] == "clingo-bootstrap" and "python" in nodes[0]["dependencies"]:
            assert "python" in names
            roots.add(nodes[0]["hash"])
    assert (len(files), len(roots)) == (59, 23)
    graph, report = load(files, processes=1)
    assert report.problems == []
    found = select_specs(graph, SpecQuery(satisfies="clingo-bootstrap ^python")).after(None)
    assert {s.hash for s in found} == roots
