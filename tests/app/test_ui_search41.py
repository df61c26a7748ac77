"""Search and facets of issue 41, in real headless Chromium: a word that is a virtual package
searches its providers' specs, as ``spack find mpi`` does (Spack's ``Spec.satisfies`` on a
virtual name: ``spack.spec.Spec._satisfies_virtual`` ... a provider of it satisfies it)."""

from __future__ import annotations

import pytest

from cachegraph.sources import bundled
from tests.app.test_ui import Watched
from tests.browser import ask, serving

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def origin():
    with serving() as origin:
        yield origin


def test_a_virtual_searches_its_providers_specs_with_the_count_satisfies_gives(browser, origin):
    answer = ask(origin, '{ specs(filter: {satisfies: "mpi"}) { totalCount } }')
    expected = answer["specs"]
    assert expected["totalCount"] >= 1  # the bundled data has an mpi provider
    watched = Watched(browser, origin)
    watched.open("/ui/search?q=mpi")
    watched.settled()
    page = watched.page
    heading = " ".join(page.locator("h1").inner_text().split())
    total = page.locator(".facets .total strong").inner_text()
    rows = page.locator("#results table tbody tr").count()
    # the facet links keep the search: a package facet's link still searches the providers
    link = page.locator(".facet[aria-label=packages] a").first.get_attribute("href")
    watched.check_and_close()
    assert heading == "Specs of the providers of mpi"
    assert int(total.replace(",", "")) == expected["totalCount"]
    assert rows == min(expected["totalCount"], 25)
    assert "q=mpi" in link


def _compilers_shown(watched: Watched, path: str) -> list[str]:
    watched.open(path)
    watched.settled()
    badges = watched.page.locator(".facet[aria-label=compilers] a")
    badges.first.wait_for(timeout=10_000)
    return [" ".join(text.split()) for text in badges.all_inner_texts()]


def test_a_compiler_under_its_old_name_is_one_facet_entry_under_spacks_current_name(
    browser, tmp_path, shared_data
):
    """The shared pages record ``oneapi@=2024.2.1``: Spack 1.1 names that compiler's package
    ``intel-oneapi-compilers`` (``spack.aliases.LEGACY_COMPILER_TO_BUILTIN``, applied by
    ``spack.spec_parser.SpecParser``'s ``%`` edges). The facet shows one entry under the current
    name, its count the records'; the old name still filters to the same specs."""
    from tests.rawpages import raw_pages

    pages = shared_data / "develop" / "adiak"
    records = [r for page in raw_pages(pages) for r in page.records]
    recorded: dict[str, int] = {}
    for r in records:
        name = r["compiler"].replace("@=", "@").replace("oneapi@", "intel-oneapi-compilers@")
        recorded[name] = recorded.get(name, 0) + 1
    assert recorded["intel-oneapi-compilers@2024.2.1"] >= 1
    with serving("--data", str(pages)) as origin:
        watched = Watched(browser, origin)
        shown = _compilers_shown(watched, "/ui/search")
        by_old = _compilers_shown(watched, "/ui/search?compiler=oneapi%402024.2.1")
        by_new = ask(
            origin,
            '{ specs(filter: {compiler: "intel-oneapi-compilers@2024.2.1"}) { totalCount '
            "nodes { compiler { name } } } }",
        )["specs"]
        watched.check_and_close()
    assert not any(s.startswith("oneapi@") for s in shown)
    assert f"intel-oneapi-compilers@2024.2.1 {recorded['intel-oneapi-compilers@2024.2.1']}" in shown
    assert by_old == [
        f"intel-oneapi-compilers@2024.2.1 {recorded['intel-oneapi-compilers@2024.2.1']}"
    ]
    assert by_new["totalCount"] == recorded["intel-oneapi-compilers@2024.2.1"]
    assert {n["compiler"]["name"] for n in by_new["nodes"]} == {"intel-oneapi-compilers@2024.2.1"}


PHONE = {"width": 390, "height": 844}
#: for each spec table: its scroll box inside the window, and its cells either in the window
#: or inside a box that scrolls sideways (its cue shown)
_LAYOUT = """() => {
  const width = window.innerWidth, found = [];
  const page = document.documentElement.scrollWidth;
  if (page > width) found.push('page ' + page);
  for (const box of document.querySelectorAll('.spectable .scroll')) {
    const b = box.getBoundingClientRect();
    if (b.left < 0 || b.right > width + 0.5) found.push('box ' + b.left + '-' + b.right);
    const scrolls = box.scrollWidth > box.clientWidth + 1;
    const cue = box.parentElement.querySelector('[data-testid=scroll-cue]');
    for (const cell of box.querySelectorAll('td, th')) {
      const c = cell.getBoundingClientRect();
      const out = c.right > b.right + 0.5 && !(scrolls && cue);
      if (out) found.push('cell ' + cell.textContent.trim());
    }
  }
  return found;
}"""


def _headers(watched: Watched) -> list[str]:
    texts = watched.page.locator("table.specs thead th").all_inner_texts()
    return [" ".join(t.split()).rstrip(" ▲▼") for t in texts]


@pytest.mark.parametrize("viewport", [{"width": 1280, "height": 800}, PHONE], ids=["1280", "390"])
def test_spec_tables_fit_their_window_or_scroll_with_a_cue(browser, origin, viewport):
    # zlib: a spec with dependents (its view's last table)
    spec = ask(origin, '{ specs(filter: {package: "zlib"}, first: 1) { nodes { hash } } }')
    hash_ = spec["specs"]["nodes"][0]["hash"]
    watched = Watched(browser, origin, viewport)
    found = {}
    for path in ("/ui/search", "/ui/package/zlib", f"/ui/spec/{hash_}"):
        watched.open(path)
        watched.settled()
        watched.page.locator("table.specs").first.wait_for(timeout=10_000)
        found[path] = watched.page.evaluate(_LAYOUT)
    headers = _headers(watched) if viewport is PHONE else None
    watched.check_and_close()
    assert found == {path: [] for path in found}
    if headers is not None:  # a phone's defaults: what fits beside the hash
        assert headers[:2] == ["hash", "package"]


def test_the_picker_hides_a_column_and_restores_it_and_remembers(browser, origin):
    watched = Watched(browser, origin)
    watched.open("/ui/search")
    watched.settled()
    page = watched.page
    page.locator("table.specs").wait_for(timeout=10_000)
    before = _headers(watched)
    page.locator(".colpicker summary").first.click()
    page.locator(".colpicker input[name=stacks]").first.uncheck()
    hidden = _headers(watched)
    cells = page.locator("table.specs tbody tr").first.locator("td").count()
    watched.open("/ui/search?size=50")  # another page: the choice is kept
    watched.settled()
    page.locator("table.specs").wait_for(timeout=10_000)
    kept = _headers(watched)
    page.locator(".colpicker summary").first.click()
    page.locator(".colpicker input[name=stacks]").first.check()
    restored = _headers(watched)
    watched.check_and_close()
    assert "stacks" in before
    assert hidden == [h for h in before if h != "stacks"] == kept
    assert cells == len(hidden)
    assert restored == before


def test_no_view_shows_a_server_path_the_status_view_names_each_mirror(browser, origin):
    """The bundled mirrors are folders on the server: home (every visitor's) says so, the
    status view shows each under its mirror's name; neither names a path of the server's
    disk (issue 38: those are the admin's only)."""
    mirrors = ask(origin, "{ mirrors { name location } }")["mirrors"]
    assert mirrors and all(m["location"].startswith(m["name"] + "/") for m in mirrors)
    watched = Watched(browser, origin)
    watched.open("/")
    watched.settled()
    home = watched.page.locator("main").inner_text()
    cells = watched.page.locator("section[aria-labelledby=mirrors-h] tbody td:last-child")
    shown = cells.all_inner_texts()
    watched.open("/ui/status")
    watched.settled()
    status = watched.page.locator("main").inner_text()
    watched.check_and_close()
    assert shown == ["on this server"] * len(mirrors)
    assert all(m["location"] in status for m in mirrors)
    assert str(bundled()) not in home + status
