"""Issue 43 item 2: a small answer's processor time in the app alone, without sockets.

    python -m bench.inprocess [--requests 3000] [--data TREE] KIND

KIND: healthz, typename, point, scoped, satisfies (with ``--data``: bench.benchmark's
``satisfies`` question, first 50 with totalCount).

The app (``create_app``, the bundled data, response cache off) is called as an ASGI app by
this process on uvloop, each request's body given at once, the answer's messages kept:
what the server's own code costs a request, apart from the HTTP stack and the client, which
on a machine shared with other work vary more than it does. Prints the processor µs of a
request, best and median of five runs of ``--requests`` after 300 unmeasured.
With ``--data`` (a page tree: ``bench.benchmark`` generates them), the app serves that tree
(``--snapshot``: read at start instead, written when missing) and the point and scoped
questions take ``bench.benchmark``'s variables, drawn from its pages (the scoped question:
one package's specs in a stack, by compiler; the same text as the benchmark's).
With ``--at-once``, POSTs are answered as the server's protocol answers them when it can
(``CacheGraphApp.answer_now``: no ASGI messages; a request it does not answer at once goes
the whole way). It measures the checkout it runs in: to compare another (``git archive REV
| tar -x -C DIR``), copy this file into its ``bench/`` and run it there.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import orjson

POINT = """query($hash: String!) { spec(hash: $hash) { hash compiler { name version }
  target { name } stacks { name } } }"""
#: bench.benchmark's "satisfies 'name@range: +variant', first 50 with totalCount"
SATISFIES = (
    "query($c: String!) { specs(filter: {satisfies: $c}, first: 50) "
    "{ totalCount nodes { hash version } } }"
)
#: bench.benchmark's "one package's specs in a stack, by compiler", the same text
SCOPED = """query($p: String!, $s: String!, $c: String!) { specs(filter:
  {package: $p, stacks: [$s], compiler: $c}, first: 20) { nodes { hash version } } }"""


async def call(app, method: str, path: str, body: bytes) -> list[dict]:
    """The ASGI messages the app sends answering one request."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
        "headers": [(b"host", b"localhost"), (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())],
    }  # fmt: skip
    given = [{"type": "http.request", "body": body, "more_body": False}]
    sent: list[dict] = []

    async def receive() -> dict:
        return given.pop() if given else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


async def variables(app, data: str | None) -> tuple[list[str], list[dict], list[dict]]:
    """Hashes for the point query, variables of the scoped question and of ``satisfies``."""
    if data:
        from bench.benchmark import sample

        drawn = sample(Path(data))
        return drawn.hashes, drawn.scoped, drawn.constraints
    first = orjson.dumps(
        {"query": "{ specs(first: 50) { nodes { hash package { name } compiler { name } "
         "stacks { name } } } }"}
    )  # fmt: skip
    answer = orjson.loads((await call(app, "POST", "/graphql", first))[1]["body"])
    nodes = answer["data"]["specs"]["nodes"]
    scoped = [
        {"p": n["package"]["name"], "s": n["stacks"][0]["name"], "c": n["compiler"]["name"]}
        for n in nodes
        if n["stacks"] and n["compiler"]
    ]
    return [node["hash"] for node in nodes], scoped, [{"c": n["package"]["name"]} for n in nodes]


async def measure(kind: str, n: int, data: str | None, at_once: bool) -> tuple[float, float]:
    from cachegraph.app import create_app

    app = create_app()
    async with app.router.lifespan_context(app):
        hashes, scoped, constraints = await variables(app, data)
        requests = {
            "healthz": [("GET", "/healthz", b"")],
            "typename": [("POST", "/graphql", b'{"query":"{ __typename }"}')],
            "point": [("POST", "/graphql", orjson.dumps({"query": POINT, "variables": {"hash": h}}))
                      for h in hashes],
            "scoped": [("POST", "/graphql", orjson.dumps({"query": SCOPED, "variables": v}))
                       for v in scoped],
            "satisfies": [("POST", "/graphql", orjson.dumps({"query": SATISFIES, "variables": v}))
                          for v in constraints],
        }[kind]  # fmt: skip
        headers = [(b"host", b"localhost"), (b"content-type", b"application/json")]

        async def ask(method: str, path: str, body: bytes) -> None:
            if not (at_once and method == "POST" and app.answer_now(headers, body)):
                await call(app, method, path, body)

        for i in range(300):
            await call(app, *requests[i % len(requests)])
        runs = []
        for _ in range(5):
            started = time.process_time()
            for i in range(n):
                await ask(*requests[i % len(requests)])
            runs.append((time.process_time() - started) / n * 1e6)
    runs.sort()
    return runs[0], runs[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["healthz", "typename", "point", "scoped", "satisfies"])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--data", help="a page tree to serve (default: the bundled data)")
    parser.add_argument("--snapshot", help="with --data: a snapshot of it, made when missing")
    parser.add_argument("--at-once", action="store_true", help="as the server's protocol asks")
    args = parser.parse_args()
    os.environ["CACHEGRAPH_RESPONSE_CACHE"] = "0"
    if args.data:
        os.environ["CACHEGRAPH_DATA"] = args.data
        if args.snapshot:
            os.environ["CACHEGRAPH_SNAPSHOT"] = args.snapshot
    import uvloop

    best, median = uvloop.run(measure(args.kind, args.requests, args.data, args.at_once))
    print(f"{args.kind}: {best:.1f} µs a request (best of 5), median {median:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
