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
from cachegraph.v3mirror import V3Writer
from tests.conftest import SHARED_MIRRORS
from tests.mirrors import migrate_to_v3, raw_document, raw_index, raw_nodes


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


# -- item 7: what counts as cached ----------------------------------------------------------


def test_a_record_not_in_buildcache_is_no_cached_build(capsys, db5):
    installs = raw_index(db5 / "build_cache")
    # _associate_built_specs_with_mirror: python's 23 records are in_buildcache false (and
    # not external): 'spack buildcache list python' lists none of them.
    pythons = [e for e in installs.values() if "python" in e["spec"]]
    assert len(pythons) == 23 and not any(e["in_buildcache"] for e in pythons)
    assert _find(capsys, "python", f"--mirror=2021:bootstrap={db5}") == []
    assert len(_find(capsys, "clingo-bootstrap", f"--mirror=2021:bootstrap={db5}")) == 23


def test_spec_files_beside_an_index_that_does_not_list_them_are_not_in_its_mirror(
    capsys, shared_mirrors
):
    cache = shared_mirrors / "v2_layout_db7" / "build_cache"
    listed = {h for h, e in raw_index(cache).items() if e.get("in_buildcache", True)}
    beside = {raw_nodes(raw_document(p))[0]["hash"] for p in cache.glob("*.spec.json")}
    assert (len(listed), len(beside - listed)) == (2, 4)
    graph, report = load([], [MirrorSource("test", "db7", cache.parent)], processes=1)
    assert {s.hash for s in graph.all_specs() if s.mirrors} == listed
    assert [p.severity for p in report.problems] == ["warning"]
    assert "4 spec files beside the index are not listed in it" in report.problems[0].message
    found = _find(capsys, "libdwarf", f"--mirror=test:db7={cache.parent}")
    assert [s["hash"] for s in found] == sorted(h for h in listed if h.startswith("sk2"))


def test_a_hash_two_mirrors_describe_differently_is_a_warning_naming_both(tmp_path, shared_mirrors):
    index = json.loads((shared_mirrors / "v2_layout_db7/build_cache/index.json").read_text())
    libelf = "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"
    paths = []
    for name in ("libelf", "openssl"):
        cache = tmp_path / name / "build_cache"
        cache.mkdir(parents=True)
        installs = {libelf: index["database"]["installs"][libelf]}
        installs[libelf]["spec"] = {**installs[libelf]["spec"], "name": name}
        (cache / "index.json").write_text(
            json.dumps({"database": {**index["database"], "installs": installs}})
        )
        paths.append(cache / "index.json")
    sources = [MirrorSource("t", name, tmp_path / name) for name in ("libelf", "openssl")]
    graph, report = load([], sources, processes=1)
    assert graph.spec(libelf).package == "libelf"  # the first read is kept
    assert [(p.path, p.message, p.severity) for p in report.problems] == [
        (
            str(paths[1]),
            f"node 1: hash {libelf} is openssl@0.8.13 here but libelf@0.8.13 in "
            f"{paths[0]}#1; keeping the first",
            "warning",
        )
    ]


def _pushed(folder: Path, nodes: dict) -> Path:
    """A v2 mirror as 'spack buildcache push' of an environment and 'update-index' leave
    it: every node the lockfile has, those marked external not in the build cache
    (``_specs_to_be_packaged`` in ``cmd/buildcache.py`` skips externals)."""
    cache = folder / "build_cache"
    cache.mkdir(parents=True)
    installs = {h: {"spec": n, "in_buildcache": not n.get("external")} for h, n in nodes.items()}
    (cache / "index.json").write_text(
        json.dumps({"database": {"version": "8", "installs": installs}})
    )
    return folder


LOCKFILES = SHARED_MIRRORS.parent / "lockfiles"


@pytest.mark.parametrize(
    ("lockfile", "externals"),
    [("robertu94+mpigdb.spack.lock", 14), ("spack+all-pythons.spack.lock", 4)],
)
def test_coverage_counts_a_lockfiles_externals_apart(tmp_path, capsys, lockfile, externals):
    path = LOCKFILES / lockfile
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    doc = json.loads(path.read_text())
    nodes = doc["concrete_specs"]
    marked = {h for h, n in nodes.items() if n.get("external")}
    assert len(marked) == externals
    mirror = _pushed(tmp_path / "m", nodes)
    # Spack installs the environment from this mirror whole: every non-external node is
    # there, and an external is never fetched (install_root_node in binary_distribution.py
    # skips it), so every root not itself external is cached with its whole DAG.
    roots = [r for r in dict.fromkeys(r["hash"] for r in doc["roots"]) if r not in marked]
    assert main(["coverage", str(path), f"--mirror=develop:e4s={mirror}", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["total"], found["hits"], found["misses"], found["externals"]) == (
        len(nodes), len(nodes) - externals, 0, externals)  # fmt: skip
    assert found["cachedRoots"] == roots
    assert {e["hash"] for e in found["entries"] if e["external"]} == marked


# -- item 9: Spack 1.2's named index views ----------------------------------------------------


def _target(node: dict) -> str:
    target = node["arch"]["target"]
    return target["name"] if isinstance(target, dict) else target


def _viewed_mirror(shared_mirrors: Path, out: Path) -> tuple[Path, dict[str, set[str]]]:
    """A v3 copy of the real v2_layout/unsigned mirror (as ``spack buildcache migrate``
    writes it) with two named views beside its main index, as ``spack buildcache
    update-index --name VIEW`` writes them (``v3/manifests/index/VIEW/index.manifest.json``):
    each the index of the specs of one target and their dependencies. Returns the root and, per
    view, the hashes its index holds (``in_buildcache``)."""
    cache = shared_mirrors / "v2_layout" / "unsigned" / "build_cache"
    root = migrate_to_v3(cache, out)
    index = json.loads((cache / "index.json").read_text())
    writer = V3Writer(root)
    held = {}
    for view in ("core2", "m1"):
        everything = index["database"]["installs"]
        chosen = [h for h, e in everything.items() if _target(e["spec"]) == view]
        while True:  # with their dependencies' records, as a database holds a DAG whole
            more = {
                d["hash"] for h in chosen for d in everything[h]["spec"].get("dependencies", [])
            }
            if more <= set(chosen):
                break
            chosen += sorted(more - set(chosen))
        installs = {h: everything[h] for h in chosen}
        writer.add_index({"database": {**index["database"], "installs": installs}}, view)
        held[view] = {h for h, e in installs.items() if e["in_buildcache"]}
    held[""] = {h for h, e in index["database"]["installs"].items() if e["in_buildcache"]}
    return root, held


def test_a_mirror_given_without_a_view_loads_each_view_as_a_stack(tmp_path, shared_mirrors, capsys):
    root, held = _viewed_mirror(shared_mirrors, tmp_path / "v3")
    assert {v: len(h) for v, h in held.items()} == {"core2": 2, "m1": 4, "": 6}
    graph, report = load([], [MirrorSource("t", "all", root)], processes=1)
    assert report.problems == [] and report.views == {"t/all": ["core2", "m1"]}
    holding = {
        name: {s.hash for s in graph.all_specs() if name in s.mirrors}
        for name in ("t/all", "t/all^core2", "t/all^m1")
    }
    assert holding == {"t/all": held[""], "t/all^core2": held["core2"], "t/all^m1": held["m1"]}
    for view in ("core2", "m1"):
        assert {s.hash for s in graph.all_specs() if view in s.stacks_in("t")} == held[view]
    # told one view: that view alone, as the stack given
    for given in (
        MirrorSource("t", "x", root, view="m1"),
        MirrorSource("t", "x", root / "v3/manifests/index/m1/index.manifest.json"),
    ):
        graph, report = load([], [given], processes=1)
        assert report.problems == [] and report.views == {}
        assert {s.hash for s in graph.all_specs() if s.mirrors} == held["m1"]
    # validate names them
    assert main(["validate", f"--mirror=t:all={root}"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "views of t/all: core2 (mirror t/all^core2), m1 (mirror t/all^m1)"
    )


def _as_database_5(installs: dict) -> dict:
    """An index's records in the form of index database version 5 (Spack 0.16): each spec a
    ``{NAME: node}`` mapping, its dependencies ``{NAME: {"hash", "type"}}``; no virtuals."""
    old = {}
    for h, entry in installs.items():
        node = {k: v for k, v in entry["spec"].items() if k not in ("name", "dependencies")}
        deps = entry["spec"].get("dependencies") or []
        if deps:
            node["dependencies"] = {
                d["name"]: {"hash": d["hash"], "type": d["parameters"]["deptypes"]} for d in deps
            }
        old[h] = {**entry, "spec": {entry["spec"]["name"]: node}}
    return {"database": {"version": "5", "installs": old}}


def _dependency_edges(graph, hashes) -> set[tuple[str, str, frozenset]]:
    return {
        (h, child, data["deptypes"])
        for h in hashes
        for (kind, child), data in graph.succ["spec", h].items()
        if kind == "spec"
    }


def test_a_real_index_rewritten_as_database_version_5_loads_as_the_original(tmp_path):
    """Runs where the 2021 mirror is absent: Spack's own test mirror (database version 8),
    its records rewritten in version 5's node form, loads the same specs, held the same
    way, with the same dependency edges (``Database._read_spec_from_dict`` reads either
    form; ``_assign_dependencies`` links by the hashes named)."""
    source = SHARED_MIRRORS / "v2_layout" / "unsigned" / "build_cache"
    if not source.is_dir():
        pytest.skip(f"{source} is absent (../shared/mirrors)")
    installs = raw_index(source)
    (tmp_path / "build_cache").mkdir()
    (tmp_path / "build_cache" / "index.json").write_text(json.dumps(_as_database_5(installs)))
    old, report = load([], [MirrorSource("t", "old", tmp_path)], processes=1)
    assert [p.message for p in report.problems] == []
    new, _ = load([], [MirrorSource("t", "new", source.parent)], processes=1)
    held = {h for h, entry in installs.items() if entry["in_buildcache"]}
    assert {s.hash for s in old.all_specs() if "t/old" in s.mirrors} == held
    assert {h: old.spec(h).package for h in installs} == {
        h: e["spec"]["name"] for h, e in installs.items()
    }
    expected = {
        (h, d["hash"], frozenset(d["parameters"]["deptypes"]))
        for h, e in installs.items()
        for d in e["spec"].get("dependencies") or []
    }
    assert _dependency_edges(old, installs) == expected == _dependency_edges(new, installs)
