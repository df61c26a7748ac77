"""The web explorer in real headless Chromium against a real server on real data: the seeds,
../shared/data's pages of twenty tags and ../shared/mirrors' build caches (DAGs).

Each view is opened by its URL and shows the server's answer; a click goes home ->
package -> spec -> dependency -> back; a constraint typed into search narrows the facets
to the server's own counts; an uploaded spack.lock shows the server's coverage. No request
leaves the server. Screenshots of every view (wide and phone, light and dark) are saved
under ARTIFACTS/ui for a person to look at."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.browser import ARTIFACTS, ask, serving
from tests.conftest import SEEDS, SHARED
from tests.mirrors import serve_arguments

pytestmark = pytest.mark.slow

SHOTS = ARTIFACTS / "ui"
LOCKFILE = SHARED / "lockfiles" / "spack+all-pythons.spack.lock"
WIDE = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def origin(shared_data: Path, shared_mirrors: Path):
    data = ["--data", str(SEEDS), "--data", str(shared_data), *serve_arguments(shared_mirrors)]
    with serving(*data) as origin:
        yield origin


class Watched:
    """A page whose requests and script errors are recorded."""

    def __init__(self, browser, origin: str, viewport=WIDE, scheme: str = "light") -> None:
        self.context = browser.new_context(viewport=viewport, color_scheme=scheme)
        self.page = self.context.new_page()
        self.origin = origin
        self.requested: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requested.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))

    def open(self, path: str) -> None:
        self.page.goto(self.origin + path)
        self.page.locator("html[data-painted]").wait_for(timeout=30_000)

    def settled(self) -> None:
        """Wait until the view drawn is the address's and no part of it is still loading
        (``aria-busy``): a kept view shows its last answer until the new one comes."""
        self.page.wait_for_function(
            "document.getElementById('app').dataset.shown === location.pathname + "
            "location.search && !document.querySelector(\"main [aria-busy='true']\")"
        )

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    def check_and_close(self) -> None:
        outside = [u for u in self.requested if not u.startswith((self.origin, "data:"))]
        assert (outside, self.errors) == ([], [])
        self.context.close()


def _a_spec_with_dependencies(origin: str, package: str = "cmake") -> dict:
    found = ask(origin, "query($p: String!) { package(name: $p) { specs(first: 5) { nodes { "
                "hash dependencyCount(transitive: true) } } } }", {"p": package})  # fmt: skip
    return max(found["package"]["specs"]["nodes"], key=lambda s: s["dependencyCount"])


def views(origin: str) -> dict[str, tuple[str, str]]:
    """view -> (its URL, a text it must show, from the server's own answer)."""
    stats = ask(origin, "{ stats { specCount } }")["stats"]
    spec = _a_spec_with_dependencies(origin)
    return {
        "home": ("/", f"{stats['specCount']:,}"),
        "search": ("/ui/search?q=zlib", "specs"),
        "package": ("/ui/package/cmake", "cached specs"),
        "spec": (f"/ui/spec/{spec['hash']}", f"{spec['dependencyCount']} in all"),
        "diff": ("/ui/diff?from=v0.21.0&to=develop", "specs added"),
        "coverage": ("/ui/coverage", "Is my environment cached?"),
        # no --cache-dir: no history of changes, which the view says
        "changes": ("/ui/changes", "No change recorded since"),
    }


@pytest.mark.parametrize(
    ("viewport", "scheme"), [(WIDE, "light"), (WIDE, "dark"), (PHONE, "light")],
    ids=["wide", "dark", "phone"],
)  # fmt: skip
def test_each_view_opens_by_its_url_and_shows_the_servers_answer(browser, origin, viewport, scheme):
    for name, (path, text) in views(origin).items():
        watched = Watched(browser, origin, viewport, scheme)
        watched.open(path)
        assert watched.page.locator("html").get_attribute("data-painted") == name
        watched.page.get_by_text(text, exact=False).first.wait_for(timeout=10_000)
        if name in ("home", "diff"):  # the charts come after the tables
            watched.page.locator(".chart svg").first.wait_for(timeout=10_000)
        if name == "spec":
            watched.page.locator(".dag svg a.node").first.wait_for(timeout=10_000)
        # Nothing is wider than the screen but what scrolls inside its own frame.
        width = watched.page.evaluate("document.documentElement.scrollWidth")
        assert (name, width) == (name, viewport["width"])
        watched.shot(f"{name}-{'phone' if viewport is PHONE else scheme}")
        watched.check_and_close()


def test_a_click_through_home_package_spec_dependency_and_back(browser, origin):
    watched = Watched(browser, origin)
    page = watched.page
    # In tag "test" (the shared mirrors), libdwarf is a package with dependencies.
    watched.open("/?tag=test")
    page.get_by_role("link", name="libdwarf", exact=True).first.click()
    page.wait_for_url(re.compile(r"/ui/package/libdwarf"))
    page.locator("table.specs a.hash").first.wait_for()
    spec = _a_spec_with_dependencies(origin, "libdwarf")
    page.locator(f"table.specs a[href$='/ui/spec/{spec['hash']}']").click()
    page.wait_for_url(re.compile(spec["hash"]))
    node = page.locator(".dag a.node:not(.root)").first
    label = node.get_attribute("aria-label")
    node.click()
    page.wait_for_url(re.compile(r"/ui/spec/(?!" + spec["hash"] + ")"))
    name = label.split("@")[0]
    page.locator("h1").get_by_text(name).wait_for()
    page.go_back()
    page.wait_for_url(re.compile(spec["hash"]))
    page.locator(".dag a.node.root").wait_for()
    page.go_back()
    page.wait_for_url(re.compile(r"/ui/package/libdwarf\?tag=test$"))
    page.go_forward()
    page.wait_for_url(re.compile(spec["hash"]))
    page.locator(".dag a.node.root").wait_for()
    # The keyboard: "/" reaches the search box, Enter searches.
    page.keyboard.press("/")
    page.wait_for_function("document.activeElement.type === 'search'")
    page.keyboard.type("zlib")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/ui/search\?q=zlib"))
    watched.check_and_close()


def test_a_constraint_typed_into_search_narrows_the_facets_to_the_servers_counts(browser, origin):
    constraint = "zlib %gcc"
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/search")
    page.get_by_role("searchbox", name="search the cache").fill(constraint)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"q=zlib"))
    facets = ask(origin, "query($f: SpecFilter) { facets(filter: $f) { specCount "
                 "compilers(first: 12) { value count } } }", {"f": {"satisfies": constraint}}
                 )["facets"]  # fmt: skip
    total = page.locator(".facets .total strong")
    total.get_by_text(f"{facets['specCount']:,}", exact=True).wait_for()
    shown = page.locator("section.facet[aria-label='compilers'] .badge").all_inner_texts()
    assert shown == [f"{c['value']} {c['count']:,}" for c in facets["compilers"]]
    # A facet narrows again: the server's counts for both.
    first = facets["compilers"][0]["value"]
    page.locator("section.facet[aria-label='compilers'] .badge").first.click()
    narrowed = ask(origin, "query($f: SpecFilter) { facets(filter: $f) { specCount } }",
                   {"f": {"satisfies": constraint, "compiler": first}})["facets"]  # fmt: skip
    total.get_by_text(f"{narrowed['specCount']:,}", exact=True).wait_for()
    watched.shot("search-narrowed")
    watched.check_and_close()


def a_lockfile(shared_mirrors: Path) -> dict:
    """A real spack.lock (its specs miss: no loaded mirror holds them) with the specs of a
    real mirror's index added as roots (they hit: the server loads that mirror)."""
    lockfile = json.loads(LOCKFILE.read_text())
    index = shared_mirrors / "v2_layout" / "unsigned" / "build_cache" / "index.json"
    installs = json.loads(index.read_text())["database"]["installs"]
    for hash, entry in installs.items():
        lockfile["concrete_specs"][hash] = entry["spec"]
        lockfile["roots"].append({"hash": hash, "spec": entry["spec"]["name"]})
    return lockfile


def test_an_uploaded_lockfile_shows_the_servers_coverage(browser, origin, shared_mirrors, tmp_path):
    if not LOCKFILE.exists():
        pytest.skip(f"{LOCKFILE} is absent: the shared lockfiles are not on this machine")
    lockfile = a_lockfile(shared_mirrors)
    path = tmp_path / "spack.lock"
    path.write_text(json.dumps(lockfile))
    query = (
        "query($l: JSON) { coverage(lockfile: $l) { total hitCount missCount "
        "entries { hash hit } } }"
    )
    coverage = ask(origin, query, {"l": lockfile})["coverage"]
    assert coverage["hitCount"] > 0 and coverage["missCount"] > 0
    # Externals (their node says so) are counted apart, as the explorer says.
    externals = {h for h, n in lockfile["concrete_specs"].items() if n.get("external")}
    kept = [e for e in coverage["entries"] if e["hash"] not in externals]
    hits = sum(e["hit"] for e in kept)
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/coverage")
    page.get_by_label("spack.lock file").set_input_files(str(path))
    summary = page.get_by_test_id("coverage-summary")
    summary.wait_for(timeout=30_000)
    text = " ".join(summary.inner_text().split())
    assert text.startswith(f"{100 * hits / len(kept):.1f}% cached: {hits:,} of {len(kept):,} specs")
    # The misses first; every row with the box unticked.
    assert page.locator("table.coverage tbody tr").count() == len(kept) - hits
    page.get_by_label("only the misses").uncheck()
    assert page.locator("table.coverage tbody tr").count() == len(kept)
    page.locator(".chart svg").first.wait_for()
    watched.shot("coverage-answer")
    watched.check_and_close()


def test_a_heatmap_cell_opens_the_specs_two_stacks_share(browser, origin):
    overlaps = ask(origin, '{ stackOverlaps(tag: "develop") { sharedSpecCount stacks { name } } }')
    # root (the whole tag) is left out of the heatmap unless asked for
    largest = next(o for o in overlaps["stackOverlaps"]
                   if "root" not in (s["name"] for s in o["stacks"]))  # fmt: skip
    a, b = (s["name"] for s in largest["stacks"])
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/?tag=develop")
    cell = page.locator("g[aria-label='cell'] rect title", has_text=f"{a} ∩ {b}:")
    cell.first.locator("..").click()
    page.wait_for_url(re.compile(r"/ui/search\?"))
    assert sorted(page.url.split("?")[1].split("&")) == sorted([f"stack={a}", f"stack={b}",
                                                                "tag=develop"])  # fmt: skip
    total = page.locator(".facets .total strong")
    total.get_by_text(f"{largest['sharedSpecCount']:,}", exact=True).wait_for()
    watched.check_and_close()


def test_a_column_header_orders_the_table_as_the_server_does(browser, origin):
    expected = ask(origin, '{ specs(filter: {package: "hipblas"}, first: 25, orderBy: '
                   "[{field: VERSION, direction: DESC}]) { nodes { hash } } }")  # fmt: skip
    watched = Watched(browser, origin)
    page = watched.page
    watched.open("/ui/package/hipblas")
    page.locator("table.specs th a", has_text="version").click()  # ascending
    page.wait_for_url(re.compile(r"order=version%3Aasc"))
    # The header links to the next order once the table shows this one: clicked before,
    # it still links to ascending (the URL is there before the answer).
    page.locator("th[aria-sort='ascending']").wait_for()
    page.locator("table.specs th a", has_text="version").click()  # then descending
    page.wait_for_url(re.compile(r"order=version%3Adesc"))
    page.locator("th[aria-sort='descending']").wait_for()
    watched.settled()
    shown = page.locator("table.specs a.hash").evaluate_all("links => links.map(a => a.href)")
    assert [h.rsplit("/", 1)[1] for h in shown] == [s["hash"] for s in expected["specs"]["nodes"]]
    watched.check_and_close()
