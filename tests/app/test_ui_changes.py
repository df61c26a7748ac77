"""The explorer's history of changes (issue 42 item 5), in real headless Chromium against a
real server (``cachegraph serve``) refreshing a mirror from a real nginx whose index is
pushed anew, as tests/app/test_changes.py pushes it: one spec removed (compiler-wrapper), one
added (gcc), libdwarf 20130729 rebuilt under a new hash.

Before the push, home says nothing of changes and the "What changed" view says there are
none; after it, home says "1 new in the last 24 hours", the view draws one bar for the day of
the change, and that bar (reached by the keyboard) lists exactly those specs, each a link
while it is loaded; the spec pages say when the change added or removed them. With the
history of an earlier run in the cache directory (an event three days before), the days are
two bars the arrow keys move between, and a spec says when it came and when it went. On the
bundled data (no history kept) the same views draw cleanly."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import pytest
from cachegraph.graph.changes import LOG_FILE, Change, ChangedSpec

from tests.app.test_changes import ADDED, NEW, NEW_LIBDWARF, OLD, OLD_LIBDWARF, REMOVED, TEST, _push
from tests.app.test_ui import PHONE, Watched
from tests.browser import ask, serving

pytestmark = pytest.mark.slow

MIRROR = "develop/test"
EVENTS = """{ changes { nodes { at added { hash specString } removed { hash specString }
  replaced { old { hash specString } new { hash specString } } } } }"""
LOADED = '{ spec(hash: "%s") { hash } }'
POLLS = 300


def _event(origin: str, count: int = 1) -> dict:
    """The newest of ``count`` change events, once the server's refresh has found the pushed
    index (the one event of the push)."""
    for _ in range(POLLS):
        nodes = ask(origin, EVENTS)["changes"]["nodes"]
        if len(nodes) >= count:
            assert len(nodes) == count, nodes
            return nodes[-1]
        time.sleep(0.2)  # a poll, awaiting the refresh that finds the new index
    raise AssertionError("the pushed index made no change event")


def _shown(at: str) -> str:
    """A moment as the explorer writes it (to the second, UTC)."""
    return datetime.fromisoformat(at).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _items(page, kind: str) -> list[tuple[list[str], list[str], str]]:
    """Each spec (or old -> new pair) listed as ``kind``: the hashes it names, those it links
    to a spec page, and its text."""
    rows = page.locator(f"article.event ul[data-kind='{kind}'] > li")
    return [
        (
            row.locator("[data-hash]").evaluate_all("marks => marks.map(m => m.dataset.hash)"),
            row.locator("a.hash").evaluate_all("links => links.map(a => a.href.split('/').pop())"),
            " ".join(row.inner_text().split()),
        )
        for row in rows.all()
    ]


def _seen(watched: Watched, hash: str) -> str | None:
    """What the spec page says of when the change log saw the spec come and go (None: nothing)."""
    watched.open(f"/ui/spec/{hash}")
    watched.page.locator("main h1").wait_for()
    seen = watched.page.get_by_test_id("seen")
    return " ".join(seen.inner_text().split()) if seen.count() else None


def test_a_pushed_change_is_on_home_the_changes_view_and_the_spec_pages(
    browser, http_server, tmp_path
):
    url = http_server.publish(TEST)
    name = url.rsplit("/", 1)[1]
    _push(http_server, name, OLD)
    arguments = ("--mirror", f"develop:test={url}", "--refresh", "0.2",
                 "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    with serving(*arguments) as origin:
        # no history yet: home says nothing of changes; the view says there are none
        watched = Watched(browser, origin)
        watched.open("/")
        watched.settled()
        assert watched.page.get_by_test_id("recent").inner_text() == ""
        watched.open("/ui/changes")
        watched.settled()
        assert watched.page.get_by_test_id("no-changes").is_visible()
        assert _seen(watched, REMOVED) is None
        watched.check_and_close()

        _push(http_server, name, NEW)
        event = _event(origin)
        at, day = event["at"], event["at"][:10]
        strings = {s["hash"]: s["specString"] for s in event["added"] + event["removed"]}
        for r in event["replaced"]:
            strings |= {
                r["old"]["hash"]: r["old"]["specString"],
                r["new"]["hash"]: r["new"]["specString"],
            }
        # the test's own push: those four specs; the old libdwarf left the index (and the graph)
        loaded = {h: ask(origin, LOADED % h)["spec"] is not None for h in strings}
        assert sorted(strings) == sorted([ADDED, REMOVED, OLD_LIBDWARF, NEW_LIBDWARF])
        assert loaded == {ADDED: True, REMOVED: True, OLD_LIBDWARF: False, NEW_LIBDWARF: True}

        watched = Watched(browser, origin)
        page = watched.page
        watched.open("/")
        watched.settled()
        recent = page.get_by_test_id("recent")
        assert " ".join(recent.inner_text().split()) == "1 new in the last 24 hours."
        recent.get_by_role("link").click()
        page.wait_for_url(re.compile(r"/ui/changes\?days=7$"))
        watched.settled()
        timeline = page.locator(f"section.timeline[data-mirror='{MIRROR}']")
        assert " ".join(timeline.locator("h3").inner_text().split()) == (
            f"{MIRROR} 1 added, 1 removed, 1 replaced"
        )
        bars = timeline.locator("rect.day")
        bars.first.wait_for()
        assert bars.evaluate_all("rects => rects.map(r => r.dataset.day)") == [day]
        assert bars.first.get_attribute("aria-label") == (
            f"{MIRROR}, {day}: 1 added, 1 removed, 1 replaced (1 change)"
        )
        watched.shot("changes-timeline")
        timeline.get_by_text("As a table").click()
        assert timeline.locator("table.days tbody td").all_inner_texts() == [
            day,
            "1",
            "1",
            "1",
            "1",
        ]
        # a click on the day's bar lists its changes (the keyboard: the next test)
        bars.first.click()
        page.wait_for_url(re.compile(rf"day={day}&of=develop%2Ftest$"))
        watched.settled()
        heading = page.locator("article.event h3")
        assert " ".join(heading.inner_text().split()) == (
            f"{_shown(at)} · {MIRROR}: 1 added, 1 removed, 1 replaced"
        )
        assert _items(page, "added") == [([ADDED], [ADDED], f"/{ADDED[:7]} {strings[ADDED]}")]
        assert _items(page, "removed") == [
            ([REMOVED], [REMOVED], f"/{REMOVED[:7]} {strings[REMOVED]}")
        ]
        assert (
            _items(page, "replaced")
            == [
                (
                    [OLD_LIBDWARF, NEW_LIBDWARF],
                    [NEW_LIBDWARF],  # the old one is gone: its hash and string, no link
                    f"/{OLD_LIBDWARF[:7]} {strings[OLD_LIBDWARF]} → "
                    f"/{NEW_LIBDWARF[:7]} {strings[NEW_LIBDWARF]}",
                )
            ]
        )
        watched.shot("changes-day")
        # a spec's link opens its page, which says when the change added it
        page.locator(f"ul[data-kind='added'] a[data-hash='{ADDED}']").click()
        page.wait_for_url(re.compile(ADDED))
        page.get_by_test_id("seen").wait_for()
        assert " ".join(page.get_by_test_id("seen").inner_text().split()) == (
            f"first added {_shown(at)}"
        )
        assert _seen(watched, REMOVED) == (
            f"cached before the history kept; last removed {_shown(at)}"
        )
        assert _seen(watched, NEW_LIBDWARF) == f"first added {_shown(at)}"
        # home in the mirror's tag says the same; in a tag the change is not in, none
        watched.open("/?tag=develop")
        watched.settled()
        assert " ".join(page.get_by_test_id("recent").inner_text().split()) == (
            "1 new in the last 24 hours in develop."
        )
        untouched = next(h for h in _loaded_hashes(origin) if h not in strings)
        assert _seen(watched, untouched) is None
        watched.check_and_close()

        # on a phone, nothing is wider than the screen but what scrolls in its own frame
        phone = Watched(browser, origin, PHONE)
        phone.open(f"/ui/changes?day={day}&of=develop%2Ftest")
        phone.settled()
        phone.page.locator("rect.day").first.wait_for()
        phone.page.locator("article.event").wait_for()
        assert phone.page.evaluate("document.documentElement.scrollWidth") == PHONE["width"]
        phone.shot("changes-day-phone")
        phone.check_and_close()


#: what an earlier run recorded of compiler-wrapper (REMOVED) coming, three days before
WRAPPER = "compiler-wrapper@1.0 build_system=generic arch=test-debian6-m1"


def test_days_of_history_are_bars_the_arrow_keys_reach_and_a_spec_says_when_it_came_and_went(
    browser, http_server, tmp_path
):
    url = http_server.publish(TEST)
    name = url.rsplit("/", 1)[1]
    _push(http_server, name, OLD)
    # the history an earlier run kept in the cache directory, as it writes it
    earlier = float(int(time.time()) - 3 * 86400)
    kept = Change(
        earlier, MIRROR, "develop", "test", "a", "b", [ChangedSpec(REMOVED, WRAPPER)], id=1
    )
    folder = tmp_path / "cache" / "changes"
    folder.mkdir(parents=True)
    (folder / LOG_FILE).write_text(kept.to_line())
    before = datetime.fromtimestamp(earlier, UTC)
    arguments = ("--mirror", f"develop:test={url}", "--refresh", "0.2",
                 "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    with serving(*arguments) as origin:
        # a history, nothing in the last 24 hours: home says so
        watched = Watched(browser, origin)
        page = watched.page
        watched.open("/")
        watched.settled()
        assert " ".join(page.get_by_test_id("recent").inner_text().split()) == (
            "0 new in the last 24 hours."
        )
        _push(http_server, name, NEW)
        event = _event(origin, count=2)
        today = event["at"][:10]
        watched.open("/ui/changes?days=7")
        watched.settled()
        timeline = page.locator(f"section.timeline[data-mirror='{MIRROR}']")
        assert " ".join(timeline.locator("h3").inner_text().split()) == (
            f"{MIRROR} 2 added, 1 removed, 1 replaced"
        )
        bars = timeline.locator("rect.day")
        bars.nth(1).wait_for()
        days = [before.strftime("%Y-%m-%d"), today]
        assert bars.evaluate_all("rects => rects.map(r => [r.dataset.day, r.tabIndex])") == [
            [days[0], -1],
            [days[1], 0],  # the chart's one tab stop: the newest day
        ]
        bars.nth(1).focus()
        page.keyboard.press("ArrowLeft")
        assert page.evaluate("document.activeElement.dataset.day") == days[0]
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(rf"day={days[0]}&of=develop%2Ftest$"))
        watched.settled()
        # the chart is not drawn again: the focus stays on the day's bar, to move on from
        assert page.evaluate("document.activeElement.dataset.day") == days[0]
        assert " ".join(page.locator("article.event h3").inner_text().split()) == (
            f"{_shown(before.isoformat())} · {MIRROR}: 1 added, 0 removed, 0 replaced"
        )
        assert _items(page, "added") == [([REMOVED], [REMOVED], f"/{REMOVED[:7]} {WRAPPER}")]
        assert page.locator("article.event ul[data-kind='removed']").count() == 0
        # compiler-wrapper came three days ago and went with the push
        assert _seen(watched, REMOVED) == (
            f"first added {_shown(before.isoformat())}; last removed {_shown(event['at'])}"
        )
        watched.check_and_close()


def _loaded_hashes(origin: str) -> list[str]:
    return [
        s["hash"] for s in ask(origin, "{ specs(first: 50) { nodes { hash } } }")["specs"]["nodes"]
    ]


def test_with_no_history_the_views_draw_cleanly(browser):
    """The bundled data, as `cachegraph serve` with no flags serves it: no change log."""
    with serving() as origin:
        watched = Watched(browser, origin)
        page = watched.page
        watched.open("/")
        watched.settled()
        assert page.get_by_test_id("recent").inner_text() == ""
        page.get_by_role("navigation", name="views").get_by_role(
            "link", name="What changed"
        ).click()
        page.wait_for_url(re.compile(r"/ui/changes$"))
        watched.settled()
        assert page.locator("main h1").inner_text() == "What changed"
        assert page.get_by_test_id("no-changes").is_visible()
        assert page.locator("section.timeline").count() == 0
        watched.open("/ui/changes?day=2026-01-01&days=7")
        watched.settled()
        page.get_by_test_id("day").get_by_text("No change that day.").wait_for()
        assert _seen(watched, OLD_LIBDWARF) is None
        # a day the calendar has not: said so, and the view drawn as without one
        watched.open("/ui/changes?day=2026-02-30")
        watched.settled()
        assert page.get_by_test_id("not-a-day").inner_text() == (
            "“2026-02-30” is not a day: write it as YYYY-MM-DD (2026-11-28)."
        )
        assert page.get_by_test_id("no-changes").is_visible()
        assert page.get_by_test_id("day").count() == 0
        watched.check_and_close()
