"""The socket ``cachegraph serve`` binds before loading: connections accepted on it send
small answers at once (TCP_NODELAY), as those of a socket Uvicorn binds itself do."""

from __future__ import annotations

import asyncio
import socket

from cachegraph.cli import _listen


def test_connections_accepted_on_the_bound_socket_have_nagle_off():
    # With Nagle's algorithm on, an answer written in two parts (headers, then body) waited
    # for the client's delayed ACK: 44 ms per kept-alive request, /healthz too.
    listening = _listen("127.0.0.1", 0)
    port = listening.getsockname()[1]

    async def accepted_nodelay() -> int:
        found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Accepting(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                found.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Accepting, sock=listening)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            value = await asyncio.wait_for(found, 10)
            writer.close()
            return value

    assert asyncio.run(accepted_nodelay()) == 1
