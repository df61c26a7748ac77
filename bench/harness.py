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

    async def request(self, method: str, path: str, body: bytes = b"", headers: str = ""):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = (
            f"{method} {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n{headers}\r\n"
        )
        self.writer.write(head.encode() + body)
        await self.writer.drain()
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

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
