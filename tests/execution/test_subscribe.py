"""``Executor.subscribe`` on the real schema: a subscriber that lets more than its budget of
events wait is cut off with an error saying so, and what waited is let go."""

from __future__ import annotations

import asyncio

from cachegraph.graph.changes import CHANGES, FOLLOWER_BYTES, Change, ChangedSpec, ChangeLog
from cachegraph.graph.store.example import example_graph
from cachegraph.schema.context import Context

from cachegraph.app import served_schema
from cachegraph.execution import Executor, Operation
from cachegraph.settings import Settings

FOLLOW = "subscription { changes { id addedCount } }"


def test_a_subscriber_that_does_not_keep_up_is_cut_off_at_its_budget():
    graph = example_graph()
    log = graph.memo[CHANGES] = ChangeLog(None, budget=64 * FOLLOWER_BYTES)
    specs = [ChangedSpec(f"{i:032d}", f"pkg@{i}") for i in range(2000)]
    size = len(Change(1.0, "develop/e4s", "develop", "e4s", "a", "b", specs).to_line())
    executor = Executor(served_schema(Settings()))

    async def run() -> list[dict]:
        answers = executor.subscribe(Operation(FOLLOW, None, None), Context(graph))
        first = asyncio.create_task(anext(answers))
        while not log.followers:  # until it listens: the loop runs the subscription
            await asyncio.sleep(0)
        log.append(Change(1.0, "develop/e4s", "develop", "e4s", "a", "b", specs))
        got = [await first]
        for _ in range(FOLLOWER_BYTES // size + 2):  # recorded, none read
            await asyncio.to_thread(
                log.append, Change(2.0, "develop/e4s", "develop", "e4s", "b", "c", specs)
            )
        got += [answer async for answer in answers]
        return got

    assert asyncio.run(run()) == [
        {"data": {"changes": {"id": "1", "addedCount": 2000}}},
        {"errors": [{"message": (
            f"cut off: more than {FOLLOWER_BYTES:,} bytes of changes waited for this reader "
            "(read faster, or ask `changes(since:)` for what was missed)"
        )}]},
    ]  # fmt: skip
