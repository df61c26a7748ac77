"""The collector's pause: shared by overlapping pauses, bounded when asked, and leaving the
collector as it found it."""

from __future__ import annotations

import gc
import threading

from cachegraph.graph.collector import collector_paused


def test_overlapping_pauses_end_when_the_last_one_does():
    first, second = collector_paused(), collector_paused()
    seen = []
    first.__enter__()
    inside, done = threading.Event(), threading.Event()

    def other() -> None:
        with second:
            seen.append(gc.isenabled())
            inside.set()
            done.wait()
        seen.append(gc.isenabled())

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait()
    first.__exit__(None, None, None)  # the other thread's pause is still under way
    seen.append(gc.isenabled())
    done.set()
    thread.join()
    assert seen == [False, False, True]


def test_a_bounded_pause_turns_the_collector_on_once_it_has_been_off_that_long():
    with collector_paused():
        with collector_paused(longest=0.0):
            pass
        # Answers overlapping without end would else never let it run.
        assert gc.isenabled()
        with collector_paused():  # joins a pause under way: no new one begins
            assert gc.isenabled()
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()


def test_a_collector_found_off_stays_off():
    gc.disable()
    try:
        with collector_paused(longest=0.0):
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
