"""The bytes of request bodies held at once are bounded: past ``body_bytes_in_flight`` a
body is refused (503, Retry-After) before a byte of it is read, so concurrent large bodies
cannot add up to gigabytes (128 lockfiles of 3.6 MB once took the server to 3.3 GB)."""

from __future__ import annotations

import asyncio
import json

from cachegraph.app import create_app
from cachegraph.settings import Settings

STATS = {"query": "{ stats { specCount } }"}
ANSWER = {"data": {"stats": {"specCount": 454}}}


def body_of(size: int) -> bytes:
    """A request for the stats, padded to ``size`` bytes with a variable it does not use
    (a query document has its own, smaller limit: max_query_bytes)."""
    plain = json.dumps({**STATS, "variables": {"pad": ""}}).encode()
    return plain[:-3] + b"x" * (size - len(plain)) + plain[-3:]


class Answer:
    def __init__(self, status: int, headers: dict, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> dict:
        return json.loads(self.body)


async def call(app, path: str, chunks: list[bytes] = (), length: int | None = None,
               pause: dict[int, asyncio.Event] | None = None, read: list | None = None
               ) -> Answer:  # fmt: skip
    """The app's answer over ASGI to a POST (a GET without chunks), its body sent a chunk
    at a time as the app reads it; before chunk i, waits for ``pause[i]``. ``read`` gets
    the number of chunks read so far."""
    headers = [(b"content-type", b"application/json")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    scope = {
        "type": "http", "method": "POST" if chunks else "GET", "path": path,
        "raw_path": path.encode(), "query_string": b"", "headers": headers, "root_path": "",
        "scheme": "http", "server": ("test", 80), "client": ("127.0.0.1", 1),
        "http_version": "1.1", "asgi": {"version": "3.0"},
    }  # fmt: skip
    sent: list[dict] = []
    given = 0

    async def receive() -> dict:
        nonlocal given
        if given >= len(chunks):
            await asyncio.Event().wait()  # after the body: a disconnect, never
        if pause and given in pause:
            await pause[given].wait()
        given += 1
        if read is not None:
            read.append(given)
        return {"type": "http.request", "body": chunks[given - 1], "more_body": given < len(chunks)}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return Answer(start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body)


async def three_clients(app) -> dict:
    """A holds 900 kB of body while B asks to send 900 kB more and C 2 kB; then B again."""
    big, small = body_of(900_000), body_of(2000)
    rest, a_read, b_read = asyncio.Event(), [], []
    a = asyncio.create_task(
        call(app, "/graphql", [big[:600_000], big[600_000:]], len(big), {1: rest}, a_read)
    )
    while not a_read:
        await asyncio.sleep(0.01)
    found = {
        "b": await call(app, "/graphql", [big], len(big), read=b_read),
        "b unsized": await call(app, "/graphql", [big[:500_000], big[500_000:]]),
        "c": await call(app, "/graphql", [small], len(small)),
        "metrics": (await call(app, "/metrics")).body.decode(),
    }
    rest.set()
    found["a"] = await a
    found["b again"] = await call(app, "/graphql", [big], len(big))
    found["b read"] = len(b_read)
    return found


def refused(n: int) -> dict:
    return {
        "errors": [
            {
                "message": f"the server holds {n} bytes of request bodies already: send the "
                f"body again later (limit body_bytes_in_flight = {n})",
                "extensions": {"code": "LIMIT_EXCEEDED", "limit": "body_bytes_in_flight"},
            }
        ]
    }


def test_bodies_past_the_bytes_in_flight_are_refused_before_they_are_read(seeds_graph):
    settings = Settings(max_body_bytes=1_000_000, body_bytes_in_flight=1_500_000)
    found = asyncio.run(three_clients(create_app(seeds_graph, settings=settings)))
    b = found["b"]
    assert (b.status, b.headers["retry-after"], b.json()) == (503, "1", refused(1_500_000))
    assert found["b read"] == 0  # refused on its Content-Length, before reading it
    # without a Content-Length: refused at the chunk that goes past the budget
    assert (found["b unsized"].status, found["b unsized"].json()) == (503, refused(1_500_000))
    assert (found["c"].status, found["c"].json()) == (200, ANSWER)  # a small body fits
    assert "\ncachegraph_body_bytes_in_flight 900000.0\n" in found["metrics"]
    assert (found["a"].status, found["a"].json()) == (200, ANSWER)
    # once A is answered, its bytes are free again
    assert (found["b again"].status, found["b again"].json()) == (200, ANSWER)


def test_a_lone_body_is_never_refused_by_the_budget(seeds_graph):
    settings = Settings(max_body_bytes=1_000_000, body_bytes_in_flight=1000)
    big = body_of(900_000)
    answer = asyncio.run(call(create_app(seeds_graph, settings=settings), "/graphql", [big]))
    assert (answer.status, answer.json()) == (200, ANSWER)


def test_a_large_request_is_neither_answered_from_nor_kept_in_the_response_cache(seeds_graph):
    # Keying it would encode its variables again, holding the interpreter lock; a small
    # request is kept as before.
    settings = Settings(response_cache=10_000_000)
    app = create_app(seeds_graph, settings=settings)
    large, small = body_of(200_000), body_of(2000)

    async def asked() -> str:
        for body in (large, large, small, small):
            answer = await call(app, "/graphql", [body], len(body))
            assert (answer.status, answer.json()) == (200, ANSWER)
        return (await call(app, "/metrics")).body.decode()

    metrics = asyncio.run(asked())
    assert 'cachegraph_response_cache_total{result="hit"} 1.0' in metrics
    assert 'cachegraph_response_cache_total{result="miss"} 1.0' in metrics
