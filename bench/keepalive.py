"""The load test's HTTP client: one keep-alive HTTP/1.1 connection, one request at a time, its
answers parsed by httptools (the C parser uvicorn uses).

bench/load.py runs on the same two cores as the server it measures, so its own CPU per request
is taken from the server and its own delays are counted in every latency it reports. With
aiohttp that was 0.14 ms of CPU per request (bench/load.py's ``client_cpu_ms_per_request``,
reads only at 6,700 req/s: a whole core), and under the mixed load the script's event loop ran
its timers 300-400 ms late at p99 (``client_loop_lag_ms``): a third of every read's p99 was the
client. This client sends prebuilt request bytes and reads only what the test reports (the
status, ``X-Cache``, the end of the body), on uvloop.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import httptools


class ConnectionClosed(ConnectionError):
    """The server closed the connection before the answer was complete."""


class _Answer(asyncio.Protocol):
    """The connection's protocol: feeds what arrives to the parser and completes ``waiting``
    with (status, X-Cache) when an answer's body ended."""

    def __init__(self):
        self.parser = httptools.HttpResponseParser(self)
        self.transport: asyncio.Transport | None = None
        self.waiting: asyncio.Future | None = None
        self.cache = "none"
        self.keep_alive = True
        self.lost = False

    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(error)
            self.transport.close()

    def connection_lost(self, exc) -> None:
        self.lost = True
        self._fail(exc or ConnectionClosed("closed by the server"))

    def _fail(self, error: BaseException) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_exception(error)

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"x-cache":
            self.cache = value.decode("latin-1")

    def on_message_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result((self.parser.get_status_code(), self.cache))


class Connection:
    """A client's connection to ``url`` with its ``Authorization``; reconnects when the server
    closed the last one."""

    def __init__(self, url: str, authorization: str):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self._head = (
            f"Host: {parts.netloc}\r\nUser-Agent: gangsched-load\r\nAccept: */*\r\n"
            f"Authorization: {authorization}\r\n"
        ).encode("latin-1")
        self._answer: _Answer | None = None

    def get_bytes(self, path: str) -> bytes:
        return b"GET " + path.encode("latin-1") + b" HTTP/1.1\r\n" + self._head + b"\r\n"

    def post_json_bytes(self, path: str, body: dict) -> bytes:
        payload = json.dumps(body).encode()
        return (
            b"POST " + path.encode("latin-1") + b" HTTP/1.1\r\n" + self._head
            + b"Content-Type: application/json\r\nContent-Length: "
            + str(len(payload)).encode() + b"\r\n\r\n" + payload
        )  # fmt: skip

    async def send(self, request: bytes, timeout: float) -> tuple[int, str]:
        """(status, X-Cache or ``none``) of the answer to ``request`` (bytes from ``get_bytes``
        or ``post_json_bytes``), within ``timeout`` seconds in all, connecting included (as
        aiohttp's total timeout did); raises OSError (ConnectionClosed included), TimeoutError
        or httptools.HttpParserError, after which the next request opens a new connection."""
        try:
            async with asyncio.timeout(timeout):
                answer = self._answer
                if answer is None or answer.lost or not answer.keep_alive:
                    self.close()
                    loop = asyncio.get_running_loop()
                    _, self._answer = await loop.create_connection(_Answer, self.host, self.port)
                    answer = self._answer
                answer.waiting = asyncio.get_running_loop().create_future()
                answer.cache = "none"
                answer.transport.write(request)
                return await answer.waiting
        except BaseException:
            self.close()  # an answer may still arrive: never read it as the next one's
            raise

    def close(self) -> None:
        if self._answer is not None:
            self._answer.transport.close()
            self._answer = None
