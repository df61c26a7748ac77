"""The explorer on a remote mirror, in real headless Chromium against a real server reading
a mirror from a real nginx (issue 37): the status view shows its URL, layout, last check and
change, age and next check, fresh; home says how old the index served is. Once that nginx
stops, the status view, opened again, shows the mirror stale with the error of its check,
and home names it stale."""

from __future__ import annotations

import re
import time
from datetime import datetime

import pytest

from tests.app.test_ui import Watched
from tests.browser import ask, serving
from tests.conftest import ROOT
from tests.remote import static_server

pytestmark = pytest.mark.slow

#: a v2 mirror of 27 specs (seeds/README.md)
MPIGDB = ROOT / "seeds" / "mirrors" / "mpigdb"
NAME = "develop/m"
REFRESH = 1.0
FRESHNESS = "{ mirrors { freshness { lastChange stale error } } }"
#: seconds the server has to find its mirror's server stopped (each check retries, backs off)
STALE_WITHIN = 120.0


def _moment(text: str) -> float:
    """Seconds since the epoch of an ISO 8601 UTC moment as the API writes it."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z").timestamp()


def _status_row(watched: Watched) -> list[str]:
    """The cells of the mirror's row in the status view's remote mirrors, as read."""
    watched.open("/ui/status")
    watched.settled()
    row = watched.page.locator(f"table.freshness tr[data-mirror='{NAME}']")
    row.wait_for(timeout=10_000)
    return [" ".join(t.split()) for t in row.locator("td").all_inner_texts()]


def _within(low: float, value: float, high: float) -> bool:
    """Whether ``value`` is in [low, high], a second of slack each side (moments are shown
    to the second)."""
    return low - 1 <= value <= high + 1


def _age_fits(text: str, pattern: str, low: float, high: float) -> bool:
    """Whether the age in ``text`` ("12 s", "2 min": rounded down), the one group of
    ``pattern``, can be a span between ``low`` and ``high`` seconds."""
    found = re.fullmatch(pattern, text)
    assert found, (pattern, text)
    n, unit = re.fullmatch(r"(\d+) (s|min)", found[1]).groups()
    size = 1 if unit == "s" else 60
    return int(n) * size <= high + 1 and low - 1 < (int(n) + 1) * size


def _home_line(browser, origin: str, shot: str) -> tuple[str, float, float]:
    """Home's line on the data's age, in a new context (a view's answers are kept for
    max-age), with the moments before it was asked and after it was shown; a screenshot
    named ``shot`` for a person to look at."""
    watched = Watched(browser, origin)
    asked = time.time()
    watched.open("/")
    line = watched.page.get_by_test_id("data-age").inner_text()
    shown = time.time()
    watched.shot(shot)
    watched.check_and_close()
    return line, asked, shown


def _stale_answer(origin: str) -> dict:
    """The mirror's freshness once the server has found its mirror's server gone."""
    deadline = time.monotonic() + STALE_WITHIN
    while time.monotonic() < deadline:
        [mirror] = ask(origin, FRESHNESS)["mirrors"]
        if mirror["freshness"]["stale"]:
            return mirror["freshness"]
        time.sleep(0.2)  # a poll, awaiting the check that fails
    raise AssertionError(f"{NAME} not stale within {STALE_WITHIN} s of its server stopping")


def test_status_and_home_say_how_fresh_a_remote_mirror_is_and_when_it_goes_stale(
    browser, tmp_path_factory, tmp_path
):
    servers = static_server(tmp_path_factory, None)  # a private nginx, to stop
    server = next(servers)
    try:
        url = server.publish(MPIGDB)
        started = time.time()
        arguments = ["--mirror", f"develop:m={url}", "--cache-dir", str(tmp_path / "cache"),
                     "--refresh", str(REFRESH)]  # fmt: skip
        with serving(*arguments) as origin:
            [mirror] = ask(origin, FRESHNESS)["mirrors"]
            change = mirror["freshness"]["lastChange"]
            fetched = _moment(change)  # once, at the load: the index does not change
            assert started - 1 <= fetched and mirror["freshness"]["stale"] is False

            watched = Watched(browser, origin)
            asked = time.time()
            row = _status_row(watched)
            shown = time.time()
            checked, next_check = _moment(row[3]), _moment(row[6])
            assert _within(started, checked, shown)
            assert _within(checked, next_check, shown + REFRESH)
            assert _age_fits(row[5], r"(.+)", asked - fetched, shown - fetched)
            assert row == [NAME, url, "v2", row[3], change, row[5], row[6], "fresh", "none"]
            mark = watched.page.locator(f"table.mirrors tr[data-mirror='{NAME}'] a.stale")
            assert mark.count() == 0
            watched.shot("remote-status")

            line, asked, shown = _home_line(browser, origin, "remote-home")
            said = rf"The index served was fetched (.+) ago \({NAME}\)\."
            assert _age_fits(line, said, asked - fetched, shown - fetched)

            servers.close()  # nginx stopped
            stale = _stale_answer(origin)
            error = f"{url}/build_cache/index.json: cannot connect (4 tries)"
            assert (stale["error"], stale["lastChange"]) == (error, change)

            # The same page opened again: the status is asked afresh, never a kept answer.
            row = _status_row(watched)
            assert row[7:] == ["⚠ stale", error]
            assert row[:3] == [NAME, url, "v2"] and row[4] == change
            mark = watched.page.locator(f"table.mirrors tr[data-mirror='{NAME}'] a.stale")
            assert mark.inner_text() == "⚠ stale"
            assert watched.page.locator("table.freshness tr.stale").count() == 1
            watched.shot("remote-status-stale")
            watched.check_and_close()

            line, asked, shown = _home_line(browser, origin, "remote-home-stale")
            said = rf"The index served was fetched (.+) ago \({NAME}\); ⚠ 1 stale mirror: {NAME}\."
            assert _age_fits(line, said, asked - fetched, shown - fetched)
    finally:
        servers.close()
