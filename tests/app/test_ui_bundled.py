"""The explorer in real headless Chromium on the bundled data, as `cachegraph serve` with no
flags serves it (seeds/: pages, mirrors with DAGs, a spack.lock), and on pages made hostile:
the install commands, search, the status view and coverage (issue 29)."""

from __future__ import annotations

import re
import shlex

import pytest

from cachegraph.sources import bundled
from tests.app.test_ui import Watched
from tests.browser import ask, chromium, serving
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow

SIGNED = bundled() / "mirrors" / "spack-test" / "signed"
UNSIGNED = bundled() / "mirrors" / "spack-test" / "unsigned"


@pytest.fixture(scope="module")
def origin():
    with serving() as origin:
        yield origin


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def commands(page) -> list[str]:
    page.locator(".commands .command code").first.wait_for(timeout=10_000)
    return page.locator(".commands .command code").all_inner_texts()


def test_a_spec_offers_only_its_mirrors_by_root_url_with_keys_or_unsigned(browser, origin):
    watched = Watched(browser, origin)
    watched.open("/ui/spec/u5uz3dcch5if4eve4sef67o2rf2lbfgh")
    watched.page.get_by_text("Use this spec").click()
    assert commands(watched.page) == [
        f"spack mirror add --unsigned spack-test {UNSIGNED.as_uri()}",
        f"spack mirror add spack-test-signed {SIGNED.as_uri()}",
        "spack buildcache keys --install --trust",
        "spack install --use-buildcache only /u5uz3dcch5if4eve4sef67o2rf2lbfgh",
        "spack buildcache install /u5uz3dcch5if4eve4sef67o2rf2lbfgh",
    ]
    # mpich is held by one mirror of the three, unsigned: no keys step.
    watched.open("/ui/package/mpich")
    watched.page.get_by_text("Use a cached mpich").click()
    mpigdb = (bundled() / "mirrors" / "mpigdb").as_uri()
    assert commands(watched.page) == [
        f"spack mirror add --unsigned mpigdb {mpigdb}",
        "spack install --use-buildcache only mpich",
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
    # A "+" typed into the address is a plus (a variant), not a space.
    watched.open("/ui/search?q=mpich+fortran %gcc@12:")
    page.locator("h1 code").get_by_text("mpich+fortran %gcc@12:", exact=True).wait_for()
    total.get_by_text("1", exact=True).wait_for()
    # Links the explorer makes keep it: a facet click keeps the plus.
    page.locator("section.facet[aria-label='versions'] .badge").first.click()
    page.wait_for_url(re.compile(r"version="))
    page.locator("h1 code").get_by_text("mpich+fortran %gcc@12:", exact=True).wait_for()
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
        page.get_by_text(str(SEEDS)).first.wait_for()
        # Its problems, by following its count.
        marked.locator("td.num a").first.click()
        page.wait_for_url(re.compile(r"mirror=test%2Fbroken"))
        listed = page.locator("table.problems tbody tr")
        listed.first.wait_for()
        mine = [p for p in truth["loadStatus"]["problems"]["nodes"]
                if p["path"].startswith(str(broken.parent))]  # fmt: skip
        assert listed.count() == len(mine) == failed["test/broken"]
        # Home marks it too.
        watched.open("/?tag=test")
        page.locator("a.failed").get_by_text(f"{failed['test/broken']}").wait_for()
        watched.check_and_close()
