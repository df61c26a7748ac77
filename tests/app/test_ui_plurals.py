"""Counts and their nouns in the explorer, in real headless Chromium (issue 41): "1 tag", never
"1 tags", and the plural at 0 and 2, on the home and status views' totals."""

from __future__ import annotations

import pytest

from tests.app.test_ui import Watched
from tests.browser import ask, serving
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow

#: one seed page: py-keras, 130 specs of one package in one tag (seeds/README.md)
KERAS = SEEDS / "000_32877e6a9739e9c6.txt"
HOME = "{ stats { specCount packageCount stackCount compilerCount targetCount tagCount } }"
STATUS = "{ loadStatus { pages specFiles mirrors specs errorCount warningCount } }"


def _stats(watched: Watched, path: str) -> list[str]:
    """The totals a view shows, each as its words read: '130 specs'."""
    watched.open(path)
    watched.settled()
    stats = watched.page.locator(".stats .stat")
    stats.first.wait_for(timeout=10_000)
    return [" ".join(text.split()) for text in stats.all_inner_texts()]


def _said(n: int, one: str) -> str:
    return f"{n:,} {one if n == 1 else one + 's'}"


@pytest.mark.parametrize("data", [["--data", str(KERAS)], []], ids=["one-page", "bundled"])
def test_the_home_and_status_totals_agree_with_their_nouns(browser, data):
    with serving(*data) as origin:
        home = ask(origin, HOME)["stats"]
        status = ask(origin, STATUS)["loadStatus"]
        watched = Watched(browser, origin)
        shown_home = _stats(watched, "/")
        shown_status = _stats(watched, "/ui/status")
        watched.check_and_close()
    assert shown_home == [
        _said(home["specCount"], "spec"), _said(home["packageCount"], "package"),
        _said(home["stackCount"], "stack"), _said(home["compilerCount"], "compiler"),
        _said(home["targetCount"], "target"), _said(home["tagCount"], "tag"),
    ]  # fmt: skip
    assert shown_status == [
        _said(status["pages"], "page"), _said(status["specFiles"], "spec file"),
        _said(status["mirrors"], "mirror"), _said(status["specs"], "spec"),
        _said(status["errorCount"], "error"), _said(status["warningCount"], "warning"),
    ]  # fmt: skip
    if not data:  # the bundled data: 2 tags, 4 pages, 3 mirrors, 0 spec files
        assert (
            shown_home[5],
            shown_status[0],
            shown_status[2],
            shown_status[1],
        ) == ("2 tags", "4 pages", "3 mirrors", "0 spec files")
    else:  # one page: 1 tag, 1 package, 1 page; 0 mirrors, 0 errors
        assert (shown_home[1], shown_home[5], shown_status[0]) == ("1 package", "1 tag", "1 page")
        assert (shown_status[2], shown_status[4]) == ("0 mirrors", "0 errors")
