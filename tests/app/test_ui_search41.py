"""Search and facets of issue 41, in real headless Chromium: a word that is a virtual package
searches its providers' specs, as ``spack find mpi`` does (Spack's ``Spec.satisfies`` on a
virtual name: ``spack.spec.Spec._satisfies_virtual`` ... a provider of it satisfies it)."""

from __future__ import annotations

import pytest

from tests.app.test_ui import Watched
from tests.browser import ask, chromium, serving

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def origin():
    with serving() as origin:
        yield origin


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


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
