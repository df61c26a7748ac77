"""What the benchmark scripts share: a lean HTTP client, server start-up and figures."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


class Connection:
    """One keep-alive HTTP/1.1 connection: small, so the client costs little CPU."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader = self.writer = None

    async def _send(self, method: str, path: str, body: bytes, headers: str) -> bytes:
        """The request sent; the status line of its answer (empty: the server had closed)."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (
            f"{method} {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n{headers}\r\n"
        )
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        return await self.reader.readline()

    async def request(self, method: str, path: str, body: bytes = b"", headers: str = ""):
        """status, body."""
        status = int((await self._send(method, path, body, headers)).split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    async def exchange(self, method: str, path: str, body: bytes = b"", headers: str = ""):
        """status, headers (lowercased names), body; sent again on a new connection when the
        server had closed this one (nginx closes after 1,000 kept-alive requests)."""
        status_line = await self._send(method, path, body, headers)
        if not status_line:
            self.writer.close()
            self.writer = None
            return await self.exchange(method, path, body, headers)
        found: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            found[name.strip().lower()] = value.strip()
        length = int(found.get("content-length", 0))
        answer = await self.reader.readexactly(length) if length else b""
        return int(status_line.split()[1]), found, answer

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port: int, server: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("the server exited")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not become ready")
