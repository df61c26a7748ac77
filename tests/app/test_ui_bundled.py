"""The explorer in real headless Chromium on the bundled data, as `cachegraph serve` with no
flags serves it (seeds/: pages, mirrors with DAGs, a spack.lock), and on pages made hostile:
the install commands, search, the status view and coverage (issue 29)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cachegraph.sources import bundled, default_lockfile
from tests.app.test_ui import Watched
from tests.browser import ask, serving
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow

SIGNED = bundled() / "mirrors" / "spack-test" / "signed"
UNSIGNED = bundled() / "mirrors" / "spack-test" / "unsigned"


@pytest.fixture(scope="module")
def origin():
    with serving() as origin:
        yield origin


def commands(page) -> list[str]:
    page.locator(".commands .command code").first.wait_for(timeout=10_000)
    return page.locator(".commands .command code").all_inner_texts()


def test_a_spec_offers_only_its_mirrors_by_root_url_with_keys_or_unsigned(browser, origin):
    watched = Watched(browser, origin)
    watched.open("/ui/spec/u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    watched.page.get_by_text("Use this spec").click()
    # the bundled mirrors are folders of the server's disk: no path of it in the page
    assert commands(watched.page) == [
        "spack buildcache keys --install --trust",
        "spack install --use-buildcache only /u5uz3dcch5if4eve4sef67o2rf2lbfgh",
        "spack buildcache install /u5uz3dcch5if4eve4sef67o2rf2lbfgh",
    ]
    assert watched.page.get_by_test_id("on-disk").all_inner_texts() == [
        f"{name} is a folder on the server's disk: ask its operator for a copy, then "
        f"spack mirror add{flag} {name} PATH-OF-THE-COPY."
        for name, flag in [("spack-test", " --unsigned"), ("spack-test-signed", "")]
    ]
    assert str(bundled()) not in watched.page.content()
    # mpich is held by one mirror of the three, unsigned: no keys step.
    watched.open("/ui/package/mpich")
    watched.page.get_by_text("Use a cached mpich").click()
    assert commands(watched.page) == ["spack install --use-buildcache only mpich"]
    assert watched.page.get_by_test_id("on-disk").all_inner_texts() == [
        "mpigdb is a folder on the server's disk: ask its operator for a copy, then "
        "spack mirror add --unsigned mpigdb PATH-OF-THE-COPY."
    ]
    watched.check_and_close()


def test_a_hostile_tag_is_one_quoted_word_in_the_copy_box(browser, tmp_path):
    tag = "develop;touch x"
    page_text = (SEEDS / "000_32877e6a9739e9c6.txt").read_text()
    hostile = page_text.replace("categories: [package, develop]", f'categories: [package, "{tag}"]')
    assert hostile != page_text
    (tmp_path / "py-keras.md").write_text(hostile)
    with serving("--data", str(tmp_path)) as origin:
        hash = ask(origin, "{ specs(first: 1) { nodes { hash } } }")["specs"]["nodes"][0]["hash"]
        watched = Watched(browser, origin)
        watched.open(f"/ui/spec/{hash}")
        watched.page.get_by_text("Use this spec").click()
        shown = commands(watched.page)
        assert shown[0] == (
            "spack mirror add 'develop;touch x' 'https://binaries.spack.io/develop;touch x'"
        )
        # As a shell splits it: the tag is one argument, and nothing else runs.
        assert shlex.split(shown[0]) == [
            "spack", "mirror", "add", tag, f"https://binaries.spack.io/{tag}"
        ]  # fmt: skip
        assert shown[1] == "spack buildcache keys --install --trust"
        watched.check_and_close()


def search(watched, text: str) -> None:
    """Type into the header's search box and press Enter, as a person does."""
    box = watched.page.get_by_role("searchbox", name="search the cache")
    box.fill(text)
    box.press("Enter")


def test_search_forgives_case_parts_of_names_attribute_values_hashes_and_plus(browser, origin):
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/search")
    # A part of a name: the package, with its count, then its specs.
    search(watched, "keras")
    keras = ask(origin, '{ package(name: "py-keras") { specCount } }')["package"]["specCount"]
    page.locator("h1").get_by_text("py-keras").wait_for(timeout=10_000)
    page.get_by_text("keras → py-keras").wait_for()
    page.locator(".facets .total strong").get_by_text(f"{keras:,}", exact=True).wait_for()
    # Case: ZLIB is zlib (a package of the mpigdb mirror).
    search(watched, "ZLIB")
    page.locator("h1 code").get_by_text("zlib", exact=True).wait_for()
    page.locator("table.specs").get_by_text("zlib").first.wait_for()
    # A bare value of an attribute: the os, the target.
    search(watched, "ubuntu24.04")
    page.locator("h1 code").get_by_text("os=ubuntu24.04", exact=True).wait_for()
    on_os = ask(origin, '{ facets(filter: {os: "ubuntu24.04"}) { specCount } }')["facets"]
    total = page.locator(".facets .total strong")
    total.get_by_text(f"{on_os['specCount']:,}", exact=True).wait_for()
    search(watched, "x86_64_v3 keras")
    page.locator("h1 code").get_by_text("py-keras target=x86_64_v3", exact=True).wait_for()
    both = ask(origin, '{ facets(filter: {satisfies: "py-keras target=x86_64_v3"}) '
               "{ specCount } }")["facets"]  # fmt: skip
    total.get_by_text(f"{both['specCount']:,}", exact=True).wait_for()
    # Several packages hold the word: listed with their counts.
    search(watched, "util")
    choices = page.locator("section.choices .badge")
    choices.first.wait_for()
    util = ask(origin, '{ packages(filter: {nameContains: "util"}) { nodes { name specCount } } }')
    assert choices.all_inner_texts() == [
        f"{p['name']} {p['specCount']:,}" for p in util["packages"]["nodes"]
    ]
    # A bare hash, with or without "/", opens its spec.
    for text in ("3uebtou", "/3UEBTOU"):
        search(watched, text)
        page.wait_for_url(re.compile(r"/ui/spec/3uebtou"))
        page.locator("h1").get_by_text("mpich").wait_for()
    # A hash no loaded spec has: said in words, with a way on (no API jargon).
    watched.open("/ui/spec/" + "a" * 32)
    page.get_by_text("No loaded spec has this hash").wait_for()
    assert "nearest(" not in page.locator("main").inner_text()
    # A tag diff from a tag no one loaded says so (no "681 added from nope").
    watched.open("/ui/diff?from=nope&to=develop")
    page.get_by_role("alert").get_by_text("No loaded tag is named").wait_for()
    assert page.locator(".summary").count() == 0
    # A "+" typed into the address is a plus (a variant), not a space.
    watched.open("/ui/search?q=mpich+fortran %gcc@12:")
    page.locator("h1 code").get_by_text("mpich+fortran %gcc@12:", exact=True).wait_for()
    total.get_by_text("1", exact=True).wait_for()
    # Links the explorer makes keep it: a facet click keeps the plus.
    page.locator("section.facet[aria-label='versions'] .badge").first.click()
    page.wait_for_url(re.compile(r"version="))
    page.locator("h1 code").get_by_text("mpich+fortran %gcc@12:", exact=True).wait_for()
    watched.check_and_close()


def test_the_package_index_lists_packages_by_letter_part_of_name_and_tag(browser, origin):
    def truth(**package_filter) -> list[list[str]]:
        nodes = ask(origin, "query($f: PackageFilter, $t: String) { packages(filter: $f, "
                    "first: 1000) { nodes { name specCount(tag: $t) } } }",
                    {"f": package_filter, "t": package_filter.get("tag")})  # fmt: skip
        return [[n["name"], f"{n['specCount']:,}"] for n in nodes["packages"]["nodes"]]

    def rows() -> list[list[str]]:
        watched.settled()
        cells = page.locator("table.packages tbody tr").evaluate_all(
            "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))"
        )
        return cells

    def letters() -> list[str]:
        return [t.split()[0] for t in page.locator("nav.letters a").all_inner_texts()]

    every = truth()
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/packages")
    assert rows() == every
    # The letters, each with the count of its packages (worked out here from the names).
    initials = Counter(name[0] for name, _ in every)
    assert page.locator("nav.letters a").all_inner_texts() == ["all"] + [
        f"{c.upper()} {n}" for c, n in sorted(initials.items())
    ]
    page.locator("nav.letters").get_by_role("link", name=re.compile(r"^L: ")).click()
    page.wait_for_url(re.compile(r"letter=l"))
    assert rows() == [row for row in every if row[0].startswith("l")]
    # Typing narrows in place, the focus staying in the box.
    box = page.get_by_label("a part of the package name")
    box.press_sequentially("lib")
    page.wait_for_url(re.compile(r"name=lib"))
    assert rows() == [row for row in truth(nameContains="lib") if row[0].startswith("l")]
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == (
        "a part of the package name"
    )
    assert letters() == ["all", *sorted({n[0].upper() for n, _ in truth(nameContains="lib")})]
    # A tag narrows the list and counts the specs of that tag.
    watched.open("/ui/packages")
    page.get_by_label("tag", exact=True).select_option("test")
    page.wait_for_url(re.compile(r"tag=test"))
    assert rows() == truth(tag="test")
    watched.check_and_close()


def test_search_has_a_tag_picker_and_turns_did_you_mean_into_searches(browser, origin):
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/search?q=mpich os=ubuntu")
    hint = page.get_by_test_id("did-you-mean")
    hint.wait_for()
    assert hint.locator("a").all_inner_texts() == ["ubuntu24.04", "ubuntu22.04", "ubuntu20.04"]
    hint.get_by_role("link", name="ubuntu22.04").click()
    page.wait_for_url(re.compile(r"q=mpich\+os%3Dubuntu22\.04$|q=mpich%20os%3Dubuntu22\.04$"))
    expected = ask(origin, '{ facets(filter: {satisfies: "mpich os=ubuntu22.04"}) { specCount } }')
    total = page.locator(".facets .total strong")
    total.get_by_text(f"{expected['facets']['specCount']:,}", exact=True).wait_for()
    # The tag picker narrows the same search to one tag.
    page.get_by_label("tag", exact=True).select_option("develop")
    page.wait_for_url(re.compile(r"tag=develop"))
    narrowed = ask(origin, '{ facets(filter: {satisfies: "mpich os=ubuntu22.04", tag: "develop"})'
                   " { specCount } }")["facets"]["specCount"]  # fmt: skip
    total.get_by_text(f"{narrowed:,}", exact=True).wait_for()
    assert page.locator("p.active").get_by_text("tag=develop").count() == 1
    watched.check_and_close()


def test_the_status_view_lists_every_source_and_mirror_and_marks_a_failed_one(browser, tmp_path):
    broken = tmp_path / "broken" / "build_cache"
    broken.mkdir(parents=True)
    (broken / "index.json").write_text('{"database": {"version": "8", "installs": {"x": ')
    (broken / "not-a-spec-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.spec.json").write_text("{")
    arguments = ["--data", str(SEEDS), "--mirrors-file", str(bundled() / "mirrors.yaml"),
                 "--mirror", f"test:broken={broken.parent}"]  # fmt: skip
    with serving(*arguments) as origin:
        truth = ask(origin, "{ loadStatus { errorCount summary problems(first: 200) { "
                    "nodes { path severity } } } mirrors { name errors specCount } }")  # fmt: skip
        failed = {m["name"]: m["errors"] for m in truth["mirrors"]}
        assert failed["test/broken"] > 0 and failed["mpigdb"] == 0
        watched = Watched(browser, origin)
        page = watched.page
        watched.open("/ui/status")
        assert (
            page.get_by_test_id("load-summary")
            .inner_text()
            .startswith(truth["loadStatus"]["summary"])
        )
        rows = page.locator("table.mirrors tbody tr")
        assert rows.count() == len(truth["mirrors"])
        marked = page.locator("table.mirrors tr.failed")
        assert [marked.nth(i).get_attribute("data-mirror") for i in range(marked.count())] == [
            "test/broken"
        ]
        # the data folder by its name: its path is the admin's only (issue 38)
        page.locator("code", has_text=SEEDS.name).first.wait_for()
        assert str(SEEDS.parent) not in page.locator("main").inner_text()
        # Local mirrors only: no remote mirror's freshness, no stale mark.
        assert page.locator("#freshness-h, a.stale").count() == 0
        # Its problems, by following its count.
        marked.locator("td.num a").first.click()
        page.wait_for_url(re.compile(r"mirror=test%2Fbroken"))
        page.locator("#problems-h small", has_text="of test/broken").wait_for()
        watched.settled()
        listed = page.locator("table.problems tbody tr")
        mine = [p for p in truth["loadStatus"]["problems"]["nodes"]
                if p["path"].startswith("test/broken/")]  # fmt: skip
        assert listed.count() == len(mine) == failed["test/broken"]
        # Home marks it too.
        watched.open("/?tag=test")
        page.locator("a.failed").get_by_text(f"{failed['test/broken']}").wait_for()
        assert page.get_by_test_id("data-age").count() == 0  # its age is a remote mirror's
        watched.check_and_close()


def test_a_mirror_that_met_errors_is_marked_wherever_it_is_listed(
    browser, tmp_path, shared_mirrors
):
    # Spack's own test mirror, its index hash wrong: an error, and every spec still loads.
    mirror = Path(shutil.copytree(shared_mirrors / "v2_layout/unsigned", tmp_path / "partial"))
    (mirror / "build_cache" / "index.json.hash").write_text("0" * 64)
    libdwarf = "u5uz3dcch5if4eve4sef67o2rf2lbfgh"
    with serving("--data", str(SEEDS), "--mirror", f"nightly:e4s={mirror}") as origin:
        [found] = ask(origin, "{ mirrors { name errors specCount } }")["mirrors"]
        assert (found["name"], found["errors"], found["specCount"] > 0) == ("nightly/e4s", 1, True)
        watched = Watched(browser, origin)
        page = watched.page
        watched.open(f"/ui/spec/{libdwarf}")
        page.locator("p", has_text="Mirrors:").locator("a.failed", has_text="⚠ 1 error").wait_for()
        for path, opener in [(f"/ui/spec/{libdwarf}", "Use this spec"),
                             ("/ui/package/libdwarf", "Use a cached libdwarf")]:  # fmt: skip
            watched.open(path)
            page.get_by_text(opener).click()
            page.locator(".commands p.hint", has_text="nightly/e4s").locator(
                "a.failed", has_text="⚠ 1 error"
            ).wait_for()
        watched.open("/?tag=nightly")
        page.locator("a.failed", has_text="⚠ 1 error").first.wait_for()
        watched.check_and_close()


def test_coverage_reads_like_guix_weather_and_follows_every_option(browser, origin, tmp_path):
    lock = json.loads(default_lockfile().read_text())
    nodes = lock["concrete_specs"]
    externals = {h for h, n in nodes.items() if n.get("external")}
    index = json.loads((bundled() / "mirrors/mpigdb/build_cache/index.json").read_text())
    held = {h for h, e in index["database"]["installs"].items() if e["in_buildcache"]}
    counted = len(nodes) - len(externals)
    hits = len(held - externals)
    # How many specs of the environment depend on each, worked out here from the lockfile.
    users = {h: {u for u, n in nodes.items() for d in n.get("dependencies", []) if d["hash"] == h}
             for h in nodes}  # fmt: skip

    def needed(h):
        seen, todo = set(), list(users[h])
        while todo:
            u = todo.pop()
            if u not in seen:
                seen.add(u)
                todo += users[u]
        return len(seen)

    misses = sorted((h for h in nodes if h not in held and h not in externals),
                    key=lambda h: -needed(h))  # fmt: skip
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/coverage")
    chooser = page.get_by_label("spack.lock file")
    chooser.set_input_files(str(default_lockfile()))
    summary = page.get_by_test_id("coverage-summary")
    summary.wait_for(timeout=30_000)
    assert " ".join(summary.inner_text().split()) == (
        f"{100 * hits / counted:.1f}% cached: {hits} of {counted} specs; download size unknown "
        "(no source gives the sizes of these specs); "
        f"{len(externals)} externals apart (never fetched from a cache)"
    )
    rows = page.locator("table.coverage tbody tr")
    assert rows.count() == len(misses)
    first = rows.first.locator("td").nth(3).inner_text()
    assert int(first) == needed(misses[0]) == max(needed(h) for h in misses) > 0
    page.locator("details.externals summary").get_by_text(f"{len(externals)} externals").wait_for()
    # Another tag: asked again at once (the bundled mirror is in "develop", not "test").
    page.get_by_label("tag").select_option("test")
    page.get_by_text("0.0% cached: 0 of").wait_for(timeout=30_000)
    page.get_by_label("tag").select_option("develop")
    page.get_by_text(f"{100 * hits / counted:.1f}% cached").wait_for(timeout=30_000)
    # The same file chosen again is read again; JSON that is no lockfile is said to be so.
    bad = tmp_path / "spack.lock"
    bad.write_text('{"not": "a lockfile"}')
    chooser.set_input_files(str(bad))
    page.get_by_text("This is not a spack.lock").wait_for()
    assert page.get_by_text("The server said").count() == 0
    chooser.set_input_files(str(default_lockfile()))
    summary.wait_for(timeout=30_000)
    bad.write_text("{")
    chooser.set_input_files(str(bad))
    page.get_by_text("spack.lock is not JSON").wait_for()
    watched.check_and_close()


def test_spec_tables_are_one_line_a_row_and_hide_the_common_values(browser, origin):
    watched = Watched(browser, origin)
    page = watched.page
    # The mirror of a real environment: python, mpich and perl carry 10 to 25 variants each.
    watched.open("/ui/search?mirror=mpigdb")
    rows = page.locator("table.specs tbody tr")
    rows.first.wait_for()
    heights = rows.evaluate_all("rows => rows.map(r => r.getBoundingClientRect().height)")
    line = page.locator("table.specs tbody td").first.evaluate(
        "td => parseFloat(getComputedStyle(td).lineHeight) || 20"
    )
    assert len(heights) == 25 and max(heights) < 2 * line + 12, (heights, line)
    # py-keras: every spec is build_system=python_pip; the table shows what differs.
    watched.open("/ui/package/py-keras")
    page.get_by_test_id("common-values").get_by_text("build_system=python_pip").wait_for()
    variants = page.locator("table.specs td.variants").all_inner_texts()
    assert variants and all(v.startswith("backend=") and "build_system" not in v for v in variants)
    # The tag each row belongs to is a column.
    headers = page.locator("table.specs th").all_inner_texts()
    column = [h.split()[0] for h in headers].index("tags")
    tags = page.locator(f"table.specs tbody td:nth-child({column + 1})").all_inner_texts()
    assert tags and set(tags) == {"develop"}
    page.get_by_test_id("common-values").get_by_role("link", name="show all").click()
    page.wait_for_url(re.compile(r"common=show"))
    page.locator("table.specs td.variants", has_text="build_system=python_pip").first.wait_for()
    # The page size is the reader's, and a pager is under the table too.
    page.locator(".pagesize a", has_text="50").click()
    page.wait_for_url(re.compile(r"size=50"))
    page.locator("nav.pager").nth(1).get_by_text("1–50 of 130").wait_for()
    assert page.locator("table.specs tbody tr").count() == 50
    watched.check_and_close()


#: zfp's variants as spack-packages' zfp/package.py (a CMakePackage and CudaPackage)
#: declares them: the widest row the issue measured (16 variants and more).
ZFP = ["bsws=64", "build_system=cmake", "build_type=Release", "generator=make", "round=never",
       "~aligned", "~c", "~daz", "~fasthash", "~fortran", "~ipo", "~profile", "~python",
       "+shared", "~strided", "~twoway", "+utilities"]  # fmt: skip


def zfp_page(folder: Path) -> None:
    """A cache page of zfp in the site's format, three specs that differ in a few variants."""
    specs = []
    for i, extra in enumerate([["~cuda", "~openmp"], ["+cuda", "cuda_arch=80", "~openmp"],
                               ["~cuda", "+openmp"]]):  # fmt: skip
        specs.append({
            "compiler": "gcc@=13.3.0", "hash": f"{'zfp' + 'abc'[i]:a<32}", "os": "ubuntu24.04",
            "platform": "linux", "size": "-", "stacks": ["e4s", "root"], "target": "x86_64_v3",
            "variants": sorted(ZFP + extra), "versions": ["1.0.1"],
        })  # fmt: skip
    meta = {"compilers": ["gcc@=13.3.0"], "num_specs": 3,
            "num_specs_by_stack": {"e4s": 3, "root": 3}, "oss": ["ubuntu24.04"],
            "platforms": ["linux"], "stacks": ["e4s", "root"], "targets": ["x86_64_v3"],
            "versions": ["1.0.1"]}  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "zfp.md").write_text(
        f'---\ntitle: "zfp"\nlayout: cache\ncategories: [package, develop]\n'
        f"meta: {json.dumps(meta)}\nspec_details: {json.dumps(specs)}\n---\n"
    )


def test_a_zfp_row_is_one_line_at_1280_px_even_with_every_variant_shown(browser, tmp_path):
    zfp_page(tmp_path / "pages")
    with serving("--data", str(tmp_path / "pages")) as origin:
        watched = Watched(browser, origin, {"width": 1280, "height": 800})
        page = watched.page
        for path in ["/ui/package/zfp", "/ui/package/zfp?common=show"]:
            watched.open(path)
            watched.settled()
            rows = page.locator("table.specs tbody tr")
            assert rows.count() == 3
            line = page.locator("table.specs tbody td").first.evaluate(
                "td => parseFloat(getComputedStyle(td).lineHeight) || 20"
            )
            heights = rows.evaluate_all("rs => rs.map(r => r.getBoundingClientRect().height)")
            assert max(heights) < 2 * line, (path, heights, line)
            # No chip is broken across lines, and every variant is in the cell's title.
            chips = page.locator("table.specs td.variants .chip")
            assert max(chips.evaluate_all("cs => cs.map(c => c.getClientRects().length)")) == 1
            titles = page.locator("table.specs td.variants").evaluate_all(
                "tds => tds.map(td => td.title.split(' ').length)"
            )
            assert min(titles) >= len(ZFP) + 2
        # Shown whole, the row keeps them all: its chips are every variant.
        assert len(chips.all_inner_texts()) >= 3 * (len(ZFP) + 2)
        watched.check_and_close()


def test_a_table_downloads_every_row_as_csv_and_json(browser, origin):
    expected = ask(origin, '{ specs(filter: {tag: "develop"}, first: 1000) { nodes { hash } } }')
    hashes = [s["hash"] for s in expected["specs"]["nodes"]]
    assert len(hashes) > 25  # more than one page
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/search?tag=develop")
    page.locator("table.specs").wait_for()
    with page.expect_download() as got:
        page.get_by_role("button", name="CSV").click()
    lines = Path(got.value.path()).read_text().splitlines()
    assert lines[0].startswith("hash,package,version,")
    assert [line.split(",")[0] for line in lines[1:]] == hashes
    with page.expect_download() as got:
        page.get_by_role("button", name="JSON").click()
    rows = json.loads(Path(got.value.path()).read_text())
    assert [r["hash"] for r in rows] == hashes
    watched.check_and_close()


def test_views_keep_their_state_name_their_filters_set_titles_and_move_the_focus(browser, origin):
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/search?q=py-keras")
    results = page.locator("div.results")
    results.wait_for()
    results.evaluate("el => { el.dataset.kept = 'yes'; }")
    # A facet click: the same page, marked while it updates, then the new counts.
    page.locator("section.facet[aria-label='targets'] .badge").first.click()
    page.wait_for_url(re.compile(r"target="))
    narrowed = ask(origin, '{ facets(filter: {satisfies: "py-keras", target: "aarch64"}) '
                   "{ specCount } }")["facets"]["specCount"]  # fmt: skip
    page.locator(".facets .total strong").get_by_text(f"{narrowed:,}", exact=True).wait_for()
    assert results.get_attribute("data-kept") == "yes"
    # The heading's filters, each removable, and clear all.
    active = page.locator("p.active")
    active.get_by_text("target=aarch64").wait_for()
    active.get_by_role("link", name="clear all").click()
    page.wait_for_url(re.compile(r"/ui/search\?q=py-keras$"))
    # the address changes before the view renders again: wait for the filters to go
    # (a CI run found them still there at the instant of the new URL)
    page.locator("p.active").wait_for(state="detached")
    assert page.locator("p.active").count() == 0
    # Every view its own title.
    titles = {}
    for path in ["/", "/ui/search?q=mpich", "/ui/package/mpich", "/ui/spec/3uebtou",
                 "/ui/diff?from=test&to=develop", "/ui/coverage", "/ui/status"]:  # fmt: skip
        watched.open(path)
        page.wait_for_function("document.title.includes('Spack Cache Graph')")
        titles[path] = page.title()
    assert len(set(titles.values())) == len(titles), titles
    assert "mpich@4.1.1" in titles["/ui/spec/3uebtou"] and "mpich" in titles["/ui/package/mpich"]
    # Following a link to another view moves the focus to its heading.
    watched.open("/ui/search?mirror=mpigdb")
    page.locator("table.specs a[href$='/ui/package/mpich']").click()
    page.wait_for_url(re.compile(r"/ui/package/mpich"))
    page.wait_for_function("document.activeElement.tagName === 'H1'")
    # The arrow keys on home's tag picker change the tag and leave the focus on the picker.
    watched.open("/")
    picker = page.get_by_label("tag", exact=True)
    picker.focus()
    page.keyboard.press("ArrowDown")
    page.wait_for_url(re.compile(r"\?tag="))
    page.keyboard.press("ArrowDown")
    page.wait_for_function("document.activeElement.tagName === 'SELECT'")
    # The first Tab stop is the skip link; it takes the focus to the results.
    watched.open("/ui/search?q=py-keras")
    page.locator("table.specs").wait_for()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to the results"
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.id === 'results'")
    watched.check_and_close()


@pytest.mark.parametrize(
    "viewport",
    [{"width": 1280, "height": 800}, {"width": 390, "height": 844}],
    ids=["wide", "phone"],
)
def test_the_dag_opens_on_its_root_fits_zooms_and_marks_what_no_cache_holds(
    browser, origin, viewport
):
    def inside(locator, frame) -> bool:
        a, f = locator.bounding_box(), frame.bounding_box()
        return (a["x"] >= f["x"] - 1 and a["y"] >= f["y"] - 1
                and a["x"] + a["width"] <= f["x"] + f["width"] + 1
                and a["y"] + a["height"] <= f["y"] + f["height"] + 1)  # fmt: skip

    watched = Watched(browser, origin, viewport)
    page = watched.page
    watched.open("/ui/spec/3uebtou")  # mpich: 35 nodes
    frame = page.locator(".dag-frame")
    root = page.locator(".dag a.node.root")
    root.wait_for(timeout=10_000)
    assert inside(root, frame)
    # Fit: every node in the frame.
    page.get_by_role("button", name="fit").click()
    nodes = page.locator(".dag a.node")
    assert nodes.count() == 35
    assert all(inside(nodes.nth(i), frame) for i in range(nodes.count()))
    # Zoom in: the picture grows; "root" brings the root back.
    before = root.bounding_box()["width"]
    page.get_by_role("button", name="zoom in").click()
    page.get_by_role("button", name="zoom in").click()
    assert root.bounding_box()["width"] > before * 1.4
    page.get_by_role("button", name="root").click()
    assert inside(root, frame)
    # Keys: the frame takes the focus; "+" zooms, "0" fits again.
    frame.focus()
    width = root.bounding_box()["width"]
    page.keyboard.press("+")
    assert root.bounding_box()["width"] > width
    page.keyboard.press("0")
    assert all(inside(nodes.nth(i), frame) for i in range(nodes.count()))
    # The counts and the edges drawn agree; the reduction says what it left out of the root's.
    direct = ask(origin, '{ spec(hash: "3uebtou") { dependencyCount } }')["spec"]
    drawn = page.locator(".dag path.edge").count()
    assert f"35 nodes, {drawn} edges drawn" in page.locator(".dag figcaption").inner_text()
    note = page.get_by_test_id("dag-reduced")
    if note.count():
        assert f"the root has {direct['dependencyCount']} direct dependencies" in note.inner_text()
    # A node no loaded cache holds (an external) is marked: libdwarf's gcc.
    watched.open("/ui/spec/u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    uncached = page.locator(".dag a.node.uncached")
    uncached.first.wait_for(timeout=10_000)
    assert [uncached.nth(i).get_attribute("aria-label").split("@")[0]
            for i in range(uncached.count())] == ["gcc"]  # fmt: skip
    watched.check_and_close()


def tree_mirror(folder: Path, fanout: tuple[int, ...]) -> str:
    """A v2 mirror (database version 8, as Spack writes it) of one spec, ``big``, whose DAG
    is a tree: ``fanout[0]`` direct dependencies, each with ``fanout[1]``, and so on. Every
    node is its own spec. The root's hash."""
    import base64
    import hashlib

    def hash_of(name: str) -> str:
        return base64.b32encode(hashlib.sha256(name.encode()).digest()).decode().lower()[:32]

    installs = {}

    def add(name: str, depth: int) -> str:
        children = (
            [add(f"{name}-{i}", depth + 1) for i in range(fanout[depth])]
            if depth < len(fanout)
            else []
        )
        node = {
            "name": name, "version": "1.0", "namespace": "builtin", "parameters": {},
            "arch": {"platform": "linux", "platform_os": "ubuntu22.04", "target": "x86_64_v3"},
            "hash": hash_of(name),
            "dependencies": [
                {"name": f"{name}-{i}", "hash": child,
                 "parameters": {"deptypes": ["build", "link"], "virtuals": []}}
                for i, child in enumerate(children)
            ],
        }  # fmt: skip
        installs[node["hash"]] = {"spec": node, "ref_count": 0, "in_buildcache": True}
        return node["hash"]

    root = add("big", 0)
    (folder / "build_cache").mkdir(parents=True)
    index = {"database": {"version": "8", "installs": installs}}
    (folder / "build_cache" / "index.json").write_text(json.dumps(index))
    return root


def test_a_large_dag_shows_two_levels_then_every_node_when_asked(browser, tmp_path):
    root = tree_mirror(tmp_path / "big", (10, 10, 4))  # 1 + 10 + 100 + 400 nodes
    with serving("--data", str(SEEDS), "--mirror", f"test:big={tmp_path / 'big'}") as origin:
        watched = Watched(browser, origin)
        page = watched.page
        watched.open(f"/ui/spec/{root}")
        figure = page.locator("figure.dag")
        figure.get_by_text(
            "The DAG has 511 nodes: the picture shows its first two levels."
        ).wait_for()
        assert figure.locator("svg[role=img]").get_attribute("aria-label") == (
            "dependency DAG of big with 111 nodes"
        )
        # Every node is in the mirror: none is marked as held by no cache.
        assert figure.locator("a.node.uncached").count() == 0
        figure.get_by_role("button", name="Draw all 511").click()
        figure.locator("svg[aria-label='dependency DAG of big with 511 nodes']").wait_for()
        assert figure.locator("a.node").count() == 511
        assert figure.get_by_text("first two levels").count() == 0
        assert figure.locator("a.node.uncached").count() == 0
        watched.check_and_close()


#: Stacks of Spack's CI beyond the public site's thirty, the longest names there are.
MORE_STACKS = ["aws-pcluster-neoverse_v1", "aws-pcluster-x86_64_v4", "e4s-cray-sles",
               "developer-tools-manylinux2014", "developer-tools-aarch64-linux-gnu",
               "developer-tools-x86_64_v3-linux-gnu", "bootstrap-aarch64-linux-gnu",
               "e4s-rocm-external-x86_64_v3", "ml-linux-aarch64-cpu-neoverse_v2",
               "windows-vis-x86_64"]  # fmt: skip


def test_the_heatmap_reads_at_forty_stacks(browser, tmp_path, shared_data):
    # The public site's 30 stacks and root in realistic pages, and ten more as mirrors.
    subprocess.run([sys.executable, "-m", "cachegraph.cli", "synth", str(tmp_path / "pages"),
                    "--specs", "3000", "--tags", "1"], check=True, capture_output=True)  # fmt: skip
    mirrors = []
    for i, stack in enumerate(MORE_STACKS):
        tree_mirror(tmp_path / stack, (2 + i % 3,))
        mirrors.append(f"--mirror=develop:{stack}={tmp_path / stack}")
    data = ["--data", str(tmp_path / "pages"), "--data", str(shared_data)]
    with serving(*data, *mirrors) as origin:
        stacks = [s["name"] for s in ask(origin, '{ stacks(tag: "develop") { name } }')["stacks"]]
        assert len(stacks) >= 41 and "root" in stacks
        watched = Watched(browser, origin)
        page = watched.page
        watched.open("/?tag=develop")
        chart = page.locator(".overlap .chart svg:has(g[aria-label='cell'])")
        chart.wait_for(timeout=30_000)
        # root (the whole tag) is left out; every other stack labels a row, none clipped.
        frame = chart.bounding_box()
        labels = page.locator(".overlap .chart svg g[aria-label='y-axis tick label'] text")
        names = labels.evaluate_all("ts => ts.map(t => t.textContent)")
        assert sorted(names) == sorted(s for s in stacks if s != "root")
        for axis in ("x", "y"):
            ticks = page.locator(f".overlap .chart svg g[aria-label='{axis}-axis tick label'] text")
            for box in ticks.evaluate_all("ts => ts.map(t => t.getBoundingClientRect().toJSON())"):
                assert box["x"] >= frame["x"] - 1 and box["y"] >= frame["y"] - 1
                assert box["x"] + box["width"] <= frame["x"] + frame["width"] + 1
                assert box["y"] + box["height"] <= frame["y"] + frame["height"] + 1
        assert "quantiles" in page.locator(".overlap .chart").inner_text()
        assert "root" not in page.locator("ol.pairs").inner_text()
        # One tab stop for the cells; the arrow keys move; Enter opens the pair.
        first = page.locator(".overlap .chart rect[tabindex='0']")
        assert first.count() == 1
        first.focus()
        page.keyboard.press("ArrowRight")
        focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
        assert " ∩ " in focused
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/ui/search\?stack="))
        a, b = focused.split(":")[0].split(" ∩ ")
        assert sorted(re.findall(r"stack=([^&]+)", page.url)) == sorted([a, b])
        # root comes back when asked for.
        watched.open("/?tag=develop")
        page.get_by_label("the stack root").check()
        page.locator(".overlap .chart svg g[aria-label='y-axis tick label'] text",
                     has_text="root").first.wait_for()  # fmt: skip
        watched.check_and_close()
