"""The benchmark's questions on a generated tree, answered through every optimized path --
indices, precomputed overlaps and counts, the snapshot, the HTTP app's caches and
inline runs -- and equal to a plain computation over the same pages.

The optimized paths are the same at any size, so equal answers here are what
makes the benchmark's figures at 1M specs answers one can trust.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from cachegraph.graph import load, snapshot
from cachegraph.graph.spack.names import normalize_compiler, version_key
from starlette.testclient import TestClient

from cachegraph.app import create_app
from cachegraph.settings import Settings
from cachegraph.synth import synthesize
from tests.rawpages import current_name

from ..conftest import execute

SPEC = "hash version os platform target { name } compiler { name }"
PAGE = (
    "hash shortHash package { name } version compiler { name } os platform target { name } "
    "variants versions"
)
QUERIES = {
    "by hash": f"query($h: String!) {{ spec(hash: $h) {{ {SPEC} }} }}",
    "scoped": "query($p: String!, $s: String!, $c: String!) { specs(filter: "
    "{package: $p, stacks: [$s], compiler: $c}, first: 20) { nodes { hash version } } }",
    "stack page": "query($s: String!) { stack(name: $s) { specs(first: 50) "
    "{ nodes { hash version } pageInfo { hasNextPage } } } }",
    "shared": "query($a: String!, $b: String!, $t: String) { sharedSpecs(stacks: [$a, $b], "
    "tag: $t, first: 50) { totalCount nodes { hash } } }",
    "overlaps": "query($t: String) { stackOverlaps(tag: $t) { stacks { name } "
    "sharedSpecCount jaccard } }",
    "big page": f"query($s: String!) {{ specs(filter: {{stacks: [$s]}}, first: 1000) "
    f"{{ totalCount nodes {{ {PAGE} }} }} }}",
    "package": "query($p: String!) { package(name: $p) { name specCount versions "
    "compilers { name } targets { name } oss platforms stacks { stack { name } specCount } "
    "tags { name } } }",
    "stats": "query($t: String) { stats(tag: $t) { packageCount specCount stackCount "
    "compilerCount targetCount tagCount } }",
}


class Reference:
    """The records of a page tree by the plainest means: YAML, lists, sorting."""

    def __init__(self, tree: Path) -> None:
        self.specs: dict[str, dict] = {}
        for page in sorted(tree.rglob("*.md")):
            front = yaml.safe_load(page.read_text().split("---")[1])
            tag = front["categories"][1]
            for row in front["spec_details"]:
                spec = self.specs.setdefault(row["hash"], {**row, "package": front["title"]})
                spec.setdefault("in", {}).setdefault(tag, set()).update(row["stacks"])
        for s in self.specs.values():
            s["compiler"] = current_name(normalize_compiler(s["compiler"]))
            s["all"] = set().union(*s["in"].values())
        self.ordered = sorted(
            self.specs.values(),
            key=lambda s: (s["package"], version_key(s["versions"][0]), s["hash"]),
        )

    def stacks_of(self, s: dict, tag: str | None) -> set[str]:
        return s["all"] if tag is None else s["in"].get(tag, set())

    def where(self, test) -> list[dict]:
        return [s for s in self.ordered if test(s)]

    @staticmethod
    def spec(s: dict) -> dict:
        return {
            "hash": s["hash"],
            "version": s["versions"][0],
            "os": s["os"],
            "platform": s["platform"],
            "target": {"name": s["target"]},
            "compiler": {"name": s["compiler"]} if s["compiler"] else None,
        }

    def answer(self, name: str, v: dict) -> dict:
        if name == "by hash":
            return {"spec": self.spec(self.specs[v["h"]])}
        if name == "scoped":
            found = self.where(
                lambda s: s["package"] == v["p"] and v["s"] in s["all"] and s["compiler"] == v["c"]
            )
            return {"specs": {"nodes": [_hv(s) for s in found[:20]]}}
        if name == "stack page":
            found = self.where(lambda s: v["s"] in s["all"])
            nodes = [_hv(s) for s in found[:50]]
            return {
                "stack": {"specs": {"nodes": nodes, "pageInfo": {"hasNextPage": len(found) > 50}}}
            }
        if name == "shared":
            tag = v.get("t")
            found = self.where(lambda s: {v["a"], v["b"]} <= self.stacks_of(s, tag))
            nodes = [{"hash": s["hash"]} for s in found[:50]]
            return {"sharedSpecs": {"totalCount": len(found), "nodes": nodes}}
        if name == "overlaps":
            return {"stackOverlaps": self.overlaps(v.get("t"))}
        if name == "big page":
            found = self.where(lambda s: v["s"] in s["all"])
            return {"specs": {"totalCount": len(found), "nodes": [_page(s) for s in found[:1000]]}}
        if name == "package":
            return {"package": self.package(v["p"])}
        if name == "stats":
            return {"stats": self.stats(v.get("t"))}
        raise AssertionError(name)

    def overlaps(self, tag: str | None) -> list[dict]:
        scoped = [s for s in self.ordered if tag is None or tag in s["in"]]
        names = sorted({x for s in scoped for x in self.stacks_of(s, tag)})
        size = {n: sum(n in self.stacks_of(s, tag) for s in scoped) for n in names}
        found = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                shared = sum({a, b} <= self.stacks_of(s, tag) for s in scoped)
                if shared:
                    found.append((a, b, shared, shared / (size[a] + size[b] - shared)))
        found.sort(key=lambda o: (-o[2], o[0], o[1]))
        return [
            {"stacks": [{"name": a}, {"name": b}], "sharedSpecCount": n, "jaccard": j}
            for a, b, n, j in found
        ]

    def package(self, name: str) -> dict:
        specs = self.where(lambda s: s["package"] == name)
        stacks = sorted({x for s in specs for x in s["all"]})
        return {
            "name": name,
            "specCount": len(specs),
            "versions": sorted({s["versions"][0] for s in specs}, key=version_key),
            "compilers": [{"name": c} for c in sorted({s["compiler"] for s in specs} - {None})],
            "targets": [{"name": t} for t in sorted({s["target"] for s in specs})],
            "oss": sorted({s["os"] for s in specs}),
            "platforms": sorted({s["platform"] for s in specs}),
            "stacks": [
                {"stack": {"name": x}, "specCount": sum(x in s["all"] for s in specs)}
                for x in stacks
            ],
            "tags": [{"name": t} for t in sorted({t for s in specs for t in s["in"]})],
        }

    def stats(self, tag: str | None) -> dict:
        scoped = [s for s in self.ordered if tag is None or tag in s["in"]]
        return {
            "packageCount": len({s["package"] for s in scoped}),
            "specCount": len(scoped),
            "stackCount": len({x for s in scoped for x in self.stacks_of(s, tag)}),
            "compilerCount": len({s["compiler"] for s in scoped} - {None}),
            "targetCount": len({s["target"] for s in scoped}),
            "tagCount": len({t for s in scoped for t in s["in"]} if tag is None else {tag}),
        }


def _hv(s: dict) -> dict:
    return {"hash": s["hash"], "version": s["versions"][0]}


def _page(s: dict) -> dict:
    return {
        "hash": s["hash"],
        "shortHash": s["hash"][:7],
        "package": {"name": s["package"]},
        "version": s["versions"][0],
        "compiler": {"name": s["compiler"]} if s["compiler"] else None,
        "os": s["os"],
        "platform": s["platform"],
        "target": {"name": s["target"]},
        "variants": s["variants"],
        "versions": s["versions"],
    }


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tree")
    synthesize(out, 3000, 2, 5)
    return out


@pytest.fixture(scope="module")
def reference(tree: Path) -> Reference:
    return Reference(tree)


def cases(ref: Reference) -> list[tuple[str, dict]]:
    """Each question with variables drawn from the data, the way the benchmark draws them."""
    rng = random.Random(3)
    specs = rng.sample(ref.ordered, 12)
    stacks = sorted({x for s in ref.ordered for x in s["all"]})
    tags = sorted({t for s in ref.ordered for t in s["in"]})
    found = [("by hash", {"h": s["hash"]}) for s in specs[:4]]
    found += [
        ("scoped", {"p": s["package"], "s": sorted(s["all"])[-1], "c": s["compiler"]})
        for s in specs
        if s["compiler"]
    ][:4]
    found += [("stack page", {"s": x}) for x in ("root", stacks[3])]
    found += [
        ("shared", {"a": "root", "b": stacks[5]}),
        ("shared", {"a": stacks[2], "b": stacks[7]}),
    ]
    found += [("shared", {"a": stacks[2], "b": stacks[7], "t": tags[1]})]
    found += [("overlaps", {}), ("overlaps", {"t": tags[0]})]
    found += [("big page", {"s": "root"}), ("big page", {"s": stacks[4]})]
    found += [("package", {"p": s["package"]}) for s in specs[:3]]
    found += [("stats", {}), ("stats", {"t": tags[1]})]
    return found


def test_the_optimized_paths_answer_as_the_plain_computation(tree: Path, reference: Reference):
    graph, report = load([tree])
    assert report.ok and report.specs == len(reference.specs)
    key, saved = snapshot.fingerprint([tree]), tree.parent / "snapshot"
    snapshot.save(saved, graph, report, key)
    restored, _ = snapshot.load(saved, key)
    app = create_app(graph=graph, settings=Settings(response_cache=100))
    with TestClient(app) as client:
        for name, variables in cases(reference):
            expected = {"data": reference.answer(name, variables)}
            assert execute(graph, QUERIES[name], variables) == expected, name
            assert execute(restored, QUERIES[name], variables) == expected, f"{name} (snapshot)"
            # Twice over HTTP: computed, then from the response cache (and inline when small).
            for _ in range(2):
                body = {"query": QUERIES[name], "variables": variables}
                assert client.post("/graphql", json=body).json() == expected, f"{name} (HTTP)"
