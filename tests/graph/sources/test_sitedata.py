"""The rebuilt public site's data files (``specs_data.json.gz``, ``package_data.json.gz``)
as a source.

No real sample of the two files is public (``../shared/reference/spack-cache/FORMAT.md``):
they are written here, in the documented shape, from the real pages of ../shared/data, as
spack/spack-cache's ``data.py`` would from the same specs: one record per hash (its
stacks over every release, its releases), the package listing its hashes. Loaded, each
spec must be what its pages say but its compiler (the files have none), in every release
that lists it, in the union of its stacks.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
from cachegraph.graph import load

from cachegraph.cli import main
from tests.rawpages import raw_pages

PACKAGES = ("armadillo", "adiak", "abyss")


def _site_files(shared_data: Path, out: Path) -> dict[str, dict]:
    """Write the two files from the real pages of PACKAGES; return the spec records."""
    specs: dict[str, dict] = {}
    packages: dict[str, dict] = {}
    stacks: dict[str, set] = defaultdict(set)
    for page in raw_pages(shared_data):
        if page.package not in PACKAGES:
            continue
        entry = packages.setdefault(page.package, {"uid": page.package, "url": "",
                                                   "releases": [], "specs": []})  # fmt: skip
        entry["releases"] = sorted({*entry["releases"], page.tag})
        for r in page.records:
            spec = specs.setdefault(r["hash"], {
                "hash": r["hash"], "version": r["versions"][0], "variants": r["variants"],
                "platform": r["platform"], "os": r["os"], "target": r["target"],
                "dependencies": [], "stacks": [], "releases": []})  # fmt: skip
            spec["releases"] = sorted({*spec["releases"], page.tag})
            stacks[r["hash"]] |= set(r["stacks"])
            if r["hash"] not in entry["specs"]:
                entry["specs"].append(r["hash"])
    for hash, spec in specs.items():
        spec["stacks"] = sorted(stacks[hash])
    out.mkdir()
    (out / "specs_data.json.gz").write_bytes(gzip.compress(json.dumps(specs, indent=4).encode()))
    (out / "package_data.json.gz").write_bytes(gzip.compress(json.dumps(packages).encode()))
    return specs


@pytest.fixture(scope="module")
def site(shared_data, tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    out = tmp_path_factory.mktemp("site") / "api"
    return out, _site_files(shared_data, out)


@pytest.mark.parametrize("given", ["folder", "specs_data.json.gz"])
def test_the_sites_data_loads_as_its_pages_say_with_releases_as_tags(site, given):
    out, specs = site
    path = out if given == "folder" else out / given
    graph, report = load([path], processes=1)
    assert report.problems == []
    assert len(specs) > 20 and report.specs == len(specs)
    package_of = {}
    for name in PACKAGES:
        package_of |= {h: name for h in json.loads(gzip.decompress(
            (out / "package_data.json.gz").read_bytes()))[name]["specs"]}  # fmt: skip
    for hash, raw in specs.items():
        spec = graph.spec(hash)
        assert (spec.package, spec.version, spec.compiler) == (package_of[hash], raw["version"],
                                                               None)  # fmt: skip
        assert (spec.os, spec.platform, spec.target) == (raw["os"], raw["platform"], raw["target"])
        assert sorted(spec.variants) == sorted(raw["variants"])
        assert dict(spec.stacks) == {t: frozenset(raw["stacks"]) for t in raw["releases"]}


def test_find_on_the_sites_data(site, capsys):
    out, specs = site
    armadillo = [h for h, s in specs.items() if "v0.22.0" in s["releases"]
                 and s["version"].startswith("12.")]  # fmt: skip
    assert main(["find", "--data", str(out), "--json", "armadillo@12"]) == 0
    found = {s["hash"] for s in json.loads(capsys.readouterr().out)}
    assert armadillo and armadillo[0] in found


def test_package_data_alone_says_what_it_needs(tmp_path):
    path = tmp_path / "package_data.json.gz"
    path.write_bytes(gzip.compress(b"{}"))
    report = load([path], processes=1)[1]
    assert [(p.path, p.message) for p in report.problems] == [
        (str(path), "needs specs_data.json.gz beside it; not read")
    ]
