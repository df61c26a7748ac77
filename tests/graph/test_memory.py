"""Memory and collector tuning: the collector's pause (shared by overlapping pauses, bounded
when asked, leaving the collector as it found it) and the loader's and server's entry
points."""

from __future__ import annotations

import gc
import sys
import threading
import time
import weakref

import pytest
from cachegraph.graph.memory import (
    COLLECTOR_THRESHOLDS,
    SWITCH_SECONDS,
    collector_paused,
    loading,
    pause,
    release_aside,
    serving,
)


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


class Answer(dict):
    """A dict a weak reference can watch (a plain dict takes none)."""


def test_a_value_released_aside_is_freed_and_then_its_pause_ends():
    pause()
    answer = Answer(rows=[{"package": {"name": "zlib"}, "specCount": 3}] * 1000)
    freed = weakref.ref(answer)
    release_aside(answer)
    del answer
    waited = time.monotonic()
    while (freed() is not None or not gc.isenabled()) and time.monotonic() - waited < 30:
        time.sleep(0.01)
    assert (freed(), gc.isenabled()) == (None, True)


def test_a_load_runs_with_the_collector_paused():
    with loading():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_server_sets_the_switch_interval_and_the_collectors_thresholds():
    before = sys.getswitchinterval(), gc.get_threshold()
    try:
        serving()
        # the interpreter keeps the interval in whole microseconds
        assert sys.getswitchinterval() == pytest.approx(SWITCH_SECONDS)
        assert gc.get_threshold() == COLLECTOR_THRESHOLDS
    finally:
        sys.setswitchinterval(before[0])
        gc.set_threshold(*before[1])
