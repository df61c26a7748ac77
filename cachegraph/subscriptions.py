"""GraphQL subscriptions over WebSocket at ``/graphql``: the ``graphql-transport-ws``
protocol (graphql-ws's PROTOCOL.md, what Strawberry, Apollo and GraphiQL clients speak),
each operation run by the executor's one entry point for them (``Executor.subscribe``: the
same document limits as a query's).

Why not Strawberry's own handler: the operation must go through the executor (its limits,
its masked errors, the served graph of the moment), and the bounds below are this server's.

What one client can hold is bounded: ``--followers-per-client`` sockets and event streams
a client address (more: closed 4429), ``SUBSCRIPTIONS_PER_SOCKET`` operations at once on
one socket, a message of at most ``cachegraph.server.WS_MESSAGE_BYTES`` (Uvicorn's
``ws_max_size``), ``connection_init`` within ``INIT_SECONDS`` (else 4408); events
waiting for a subscriber within ``graph.changes.FOLLOWER_BYTES`` (past them it is cut off
with an error), and a socket whose reader takes nothing for ``SEND_SECONDS`` is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from typing import Any

from prometheus_client import Counter as Counted
from prometheus_client import Gauge
from prometheus_client.registry import CollectorRegistry
from starlette.websockets import WebSocket, WebSocketDisconnect

from cachegraph.schema.context import Context

from .execution import Executor, Operation
from .observe import new_request_id
from .state import State

PROTOCOL = "graphql-transport-ws"
SUBSCRIPTIONS_PER_SOCKET = 10
INIT_SECONDS = 10.0
SEND_SECONDS = 30.0


class Subscriptions:
    """The ``/graphql`` WebSocket endpoint."""

    def __init__(
        self, executor: Executor, state: State, per_client: int, registry: CollectorRegistry
    ) -> None:
        self.executor, self.state, self.per_client = executor, state, per_client
        self.open: Counter[str] = Counter()
        self.sockets = Gauge(
            "cachegraph_subscription_sockets", "WebSocket connections open", registry=registry
        )
        self.running = Gauge(
            "cachegraph_subscriptions", "subscriptions running on them", registry=registry
        )
        self.refused = Counted(
            "cachegraph_subscription_refusals",
            "sockets closed for a limit, by the limit",
            ["limit"],
            registry=registry,
        )

    async def connect(self, websocket: WebSocket) -> None:
        """One WebSocket connection, from handshake to close."""
        if PROTOCOL not in websocket.scope.get("subprotocols", ()):
            await websocket.accept()
            await websocket.close(4406, f"Subprotocol not acceptable: offer {PROTOCOL}")
            return
        await websocket.accept(subprotocol=PROTOCOL)
        client = websocket.client.host if websocket.client else ""
        if self.open[client] >= self.per_client:
            self.refused.labels("per_client").inc()
            await websocket.close(4429, f"at most {self.per_client} change followers per client")
            return
        self.open[client] += 1
        self.sockets.inc()
        try:
            await _Socket(self, websocket).serve()
        finally:
            self.sockets.dec()
            self.open[client] -= 1
            if not self.open[client]:  # a key per address connected now, never more
                del self.open[client]


class _Closed(Exception):
    """The socket was closed (by a protocol error, a limit or the client)."""


class _Socket:
    """One connection: its handshake, its messages, its running operations."""

    def __init__(self, endpoint: Subscriptions, websocket: WebSocket) -> None:
        self.endpoint, self.websocket = endpoint, websocket
        self.acknowledged = False
        self.running: dict[str, asyncio.Task] = {}
        self.sending = asyncio.Lock()

    async def serve(self) -> None:
        try:
            try:
                first = await asyncio.wait_for(self.receive(), INIT_SECONDS)
            except TimeoutError:
                await self.close(4408, "Connection initialisation timeout")
                return
            await self.handle(first)
            while True:
                await self.handle(await self.receive())
        except (_Closed, WebSocketDisconnect):
            pass
        finally:
            for task in self.running.values():
                task.cancel()

    async def receive(self) -> dict[str, Any]:
        text = await self.websocket.receive_text()
        try:
            message = json.loads(text)
        except ValueError:
            await self.close(4400, "a message must be a JSON object")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            await self.close(4400, "a message must be a JSON object with a 'type'")
        return message

    async def handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "connection_init":
            if self.acknowledged:
                await self.close(4429, "Too many initialisation requests")
            self.acknowledged = True
            await self.send({"type": "connection_ack"})
        elif kind == "ping":
            await self.send({"type": "pong"})
        elif kind == "pong":
            pass
        elif not self.acknowledged:
            await self.close(4401, "Unauthorized: send connection_init first")
        elif kind == "subscribe":
            await self.subscribe(message)
        elif kind == "complete":
            task = self.running.pop(str(message.get("id")), None)
            if task is not None:
                task.cancel()
        else:
            await self.close(4400, f"unknown message type {kind[:50]!r}")

    async def subscribe(self, message: dict[str, Any]) -> None:
        id, payload = message.get("id"), message.get("payload")
        if not isinstance(id, str) or not isinstance(payload, dict):
            await self.close(4400, "subscribe needs a string 'id' and a 'payload' object")
        if id in self.running:
            await self.close(4409, f"Subscriber for {id[:100]} already exists")
        query, variables = payload.get("query"), payload.get("variables")
        name = payload.get("operationName")
        if (
            not isinstance(query, str)
            or not isinstance(variables, dict | None)
            or not (name is None or isinstance(name, str))
        ):
            await self.error(id, "the payload needs 'query' (a string), 'variables' (an object)")
            return
        if len(self.running) >= SUBSCRIPTIONS_PER_SOCKET:
            self.endpoint.refused.labels("per_socket").inc()
            await self.error(id, f"at most {SUBSCRIPTIONS_PER_SOCKET} subscriptions a socket")
            return
        graph = self.endpoint.state.graph
        if graph is None:
            await self.error(id, "the data is still loading: subscribe again once /readyz is 200")
            return
        admin = self.endpoint.executor.from_admin(self.websocket)
        state = self.endpoint.state
        context = Context(graph, new_request_id(), admin=admin, served=lambda: state.graph)
        answers = self.endpoint.executor.subscribe(Operation(query, variables, name), context)
        self.running[id] = asyncio.create_task(self.run(id, answers))

    async def run(self, id: str, answers) -> None:
        self.endpoint.running.inc()
        try:
            async for body in answers:
                if "data" not in body:  # it did not start, or it stopped: said once
                    await self.send({"type": "error", "id": id, "payload": body["errors"]})
                    return
                await self.send({"type": "next", "id": id, "payload": body})
            await self.send({"type": "complete", "id": id})
        except (_Closed, WebSocketDisconnect):
            pass
        finally:
            self.endpoint.running.dec()
            self.running.pop(id, None)
            with contextlib.suppress(Exception):
                await answers.aclose()

    async def error(self, id: str, message: str) -> None:
        await self.send({"type": "error", "id": id, "payload": [{"message": message}]})

    async def send(self, message: dict[str, Any]) -> None:
        async with self.sending:
            try:
                await asyncio.wait_for(self.websocket.send_text(json.dumps(message)), SEND_SECONDS)
            except TimeoutError:
                self.endpoint.refused.labels("slow_reader").inc()
                raise _Closed from None

    async def close(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):
            await self.websocket.close(code, reason)
        raise _Closed
