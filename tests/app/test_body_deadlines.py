"""observe.BodyDeadlines: one sweep refuses every body past its time, on whichever loop
serves the app (a test client runs each on a loop of its own, closed after)."""

from __future__ import annotations

import asyncio
import time

from cachegraph.observe import BodyDeadlines


async def _arrives() -> dict:
    await asyncio.sleep(0)
    return {"type": "http.request", "body": b"{}", "more_body": False}


async def _never() -> dict:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


def test_a_body_that_never_comes_is_refused_on_each_loop_that_serves():
    deadlines = BodyDeadlines(0.01)
    # First loop: a body that comes; the sweep it armed never runs (the loop closes first).
    message = asyncio.run(deadlines.receive(_arrives, time.monotonic() + 60))
    assert message == {"type": "http.request", "body": b"{}", "more_body": False}
    # Second loop: a body that never comes is refused at its time, not waited on forever.
    late = asyncio.run(asyncio.wait_for(deadlines.receive(_never, time.monotonic()), 30))
    assert late is None
    assert deadlines.waiting == {} and deadlines.late == set()


def test_a_request_cancelled_otherwise_stays_cancelled():
    deadlines = BodyDeadlines(0.01)

    async def cancelled() -> str:
        task = asyncio.ensure_future(deadlines.receive(_never, time.monotonic() + 60))
        await asyncio.sleep(0)
        task.cancel()  # the client went away: not the deadline's to answer
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "answered"

    assert asyncio.run(cancelled()) == "cancelled"
    assert deadlines.waiting == {}
