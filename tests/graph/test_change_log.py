"""The change log's file: bounded by bytes, the oldest whole events out first, never a part
of one; a damaged line reported and skipped; what is kept read back by a restart."""

from __future__ import annotations

import json
import logging

from cachegraph.graph.changes import LOG_FILE, Change, ChangedSpec, ChangeLog, Replaced


def _event(n: int, specs: int = 3) -> Change:
    added = [ChangedSpec(f"{n:02d}{i:030d}", f"pkg{n}@1.{i} arch=linux-x-y") for i in range(specs)]
    replaced = [Replaced(ChangedSpec("o" * 32, "zlib@1.3"), ChangedSpec("n" * 32, "zlib@1.3"))]
    return Change(1000.0 + n, "develop/m", "develop", "m", f"old{n}", f"new{n}", added,
                  [], replaced)  # fmt: skip


def _lines(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / LOG_FILE).read_text().splitlines()]


def test_a_shrunk_budget_drops_the_oldest_whole_events(tmp_path):
    log = ChangeLog(tmp_path, budget=1 << 20)
    for n in range(1, 6):
        log.append(_event(n))
    sizes = [len(e.to_line().encode()) for e in log.events]
    assert [e["id"] for e in _lines(tmp_path)] == [1, 2, 3, 4, 5]
    # a restart with room for the newest two events and most of a third: two are kept, whole
    budget = sizes[-1] + sizes[-2] + sizes[-3] - 1
    again = ChangeLog(tmp_path, budget=budget)
    assert [e.id for e in again.events] == [4, 5] and again.dropped == 3
    assert [e["id"] for e in _lines(tmp_path)] == [4, 5]
    assert again.bytes == (tmp_path / LOG_FILE).stat().st_size <= budget
    assert list(again.events) == [_with_id(_event(4), 4), _with_id(_event(5), 5)]
    # a new event goes on from the last id, and pushes the oldest out
    again.append(_event(6))
    assert [e["id"] for e in _lines(tmp_path)] == [5, 6]


def _with_id(event: Change, id: int) -> Change:
    event.id = id
    return event


def test_an_event_larger_than_the_budget_is_not_kept_not_cut(tmp_path):
    log = ChangeLog(tmp_path, budget=600)
    log.append(_event(1, specs=1))
    log.append(_event(2, specs=50))
    assert [e.id for e in log.events] == [1]
    assert [e["id"] for e in _lines(tmp_path)] == [1]


def test_a_damaged_line_is_reported_and_skipped(tmp_path, caplog):
    log = ChangeLog(tmp_path)
    for n in range(1, 4):
        log.append(_event(n))
    text = (tmp_path / LOG_FILE).read_text().splitlines(keepends=True)
    # the second line damaged, the last cut short (a crash while writing it)
    (tmp_path / LOG_FILE).write_text(text[0] + '{"at": "x"}\n' + text[2][:40])
    caplog.set_level(logging.WARNING, "cachegraph")
    again = ChangeLog(tmp_path)
    assert [e.id for e in again.events] == [1] and again.damaged == 2
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and all(LOG_FILE in m and "skipped" in m for m in said)


def test_without_a_folder_the_log_is_in_memory(tmp_path):
    log = ChangeLog(None, budget=1 << 20)
    log.append(_event(1))
    assert [e.id for e in log.snapshot()] == [1] and list(tmp_path.iterdir()) == []


def test_logs_sharing_a_folder_read_what_the_others_added_and_dropped(tmp_path):
    """Two processes keeping one log (``--workers``): each, once it holds the log to record,
    has read the other's events first, tells its readers of them, and numbers after them."""
    one, other = ChangeLog(tmp_path), ChangeLog(tmp_path)
    told: list[int] = []
    other.listen(lambda event: told.append(event.id))
    with one.shared():
        one.append(_event(1))
    with other.shared():
        other.append(_event(2))
    with one.shared():
        pass
    assert [e.id for e in one.events] == [e.id for e in other.events] == [1, 2] and told == [1, 2]
    assert [e["id"] for e in _lines(tmp_path)] == [1, 2]
    # one of them drops the oldest to keep its budget: the file is written anew, and the
    # other reads it whole again, telling only what is new
    one.budget = len(_with_id(_event(3), 3).to_line().encode()) + 1
    with one.shared():
        one.append(_event(3))
    assert [e["id"] for e in _lines(tmp_path)] == [3]
    with other.shared():
        pass
    assert [e.id for e in other.events] == [3] and told == [1, 2, 3]


def test_a_mirror_seen_with_the_same_index_is_not_worked_out_again(tmp_path):
    # A start on unchanged mirrors compares each one's index with the one it held when last
    # seen (read alone from its record), and neither recomputes nor rewrites that record.
    from cachegraph.graph.changes import Watched, record_changes
    from cachegraph.graph.store.example import example_graph

    store = example_graph().store
    mirrors = [
        Watched("develop/e4s", "develop", "e4s", "h1"),
        Watched("develop/ml", "develop", "ml", ""),  # no index known: its specs' hashes
    ]
    for folder in (tmp_path, None):
        log = ChangeLog(folder)
        assert record_changes(log, store, mirrors, at_start=True) == []  # first seen: kept
        assert log.seen_index("develop/e4s") == "h1"
        assert log.seen_index("develop/nowhere") is None
        if folder is not None:
            kept = sorted(folder.rglob("*.npz"))
            assert len(kept) == 2
            before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in kept}
        again = ChangeLog(folder) if folder is not None else log
        assert record_changes(again, store, mirrors, at_start=True) == []
        if folder is not None:
            assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in kept} == before
        # a new index of the same specs: no event (nothing differs), the new index kept
        assert record_changes(again, store, [Watched("develop/e4s", "develop", "e4s", "h2")]) == []
        assert again.seen_index("develop/e4s") == "h2"
