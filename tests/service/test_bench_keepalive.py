"""bench/keepalive.py, bench/load.py's HTTP client, against a real socket server that answers
what each test scripts: what the client sends, that it reads each answer whole, and that after
a closed connection, a broken answer or a timeout the next request gets its own answer."""

import asyncio
import json

import httptools
import pytest

from bench.keepalive import Connection, ConnectionClosed


class ScriptedServer:
    """Answers the n-th request it reads with ``answers[n]`` (bytes; None: never answer).
    Keeps each request's bytes and the connection it came on."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.requests: list[tuple[int, bytes]] = []
        self.connections = 0

    async def start(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        host, port = self.server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def _serve(self, reader, writer):
        self.connections += 1
        connection = self.connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                self.requests.append((connection, head + body))
                answer = self.answers[len(self.requests) - 1]
                if answer is None:
                    continue
                writer.write(answer)
                await writer.drain()
                if b"connection: close" in answer.lower() or answer.endswith(b"CUT"):
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def stop(self):
        self.server.close()
        await self.server.wait_closed()


def ok(body=b"[]", *, cache=None, extra=b""):
    header = b"X-Cache: " + cache + b"\r\n" if cache else b""
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + header + extra
        + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip


@pytest.fixture
async def scripted():
    servers = []

    async def make(*answers):
        server = ScriptedServer(answers)
        servers.append(server)
        return server, await server.start()

    yield make
    for server in servers:
        await server.stop()


async def test_requests_share_one_connection_and_carry_the_token(scripted):
    server, url = await scripted(ok(cache=b"hit"), ok(b'{"a": 1}'))
    connection = Connection(url, "Token abc")
    get = connection.get_bytes("/api/v1/gangs/?pageSize=20")
    assert await connection.send(get, timeout=5) == (200, "hit")
    assert await connection.send(get, timeout=5) == (200, "none")  # no X-Cache header
    assert [number for number, _ in server.requests] == [1, 1]
    first = server.requests[0][1]
    assert first.startswith(b"GET /api/v1/gangs/?pageSize=20 HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Token abc\r\n" in first
    assert f"\r\nHost: {url.removeprefix('http://')}\r\n".encode() in first
    connection.close()


async def test_a_post_sends_its_json_with_its_length(scripted):
    server, url = await scripted(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}")
    connection = Connection(url, "Token abc")
    body = {"name": "g-1", "pods": [{"name": "p", "durationSeconds": 5}]}
    post = connection.post_json_bytes("/api/v1/gangs/", body)
    assert await connection.send(post, timeout=5) == (201, "none")
    head, _, sent = server.requests[0][1].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /api/v1/gangs/ HTTP/1.1\r\n")
    assert b"\r\nContent-Type: application/json\r\n" in head + b"\r\n"
    assert f"Content-Length: {len(sent)}".encode() in head
    assert json.loads(sent) == body
    connection.close()


async def test_a_chunked_answer_is_read_whole_before_the_next(scripted):
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Cache: miss\r\n\r\n"
        b"5\r\n[1, 2\r\n2\r\n ]\r\n0\r\n\r\n"
    )
    server, url = await scripted(chunked, ok(cache=b"stale"))
    connection = Connection(url, "Token abc")
    get = connection.get_bytes("/x")
    assert await connection.send(get, timeout=5) == (200, "miss")
    assert await connection.send(get, timeout=5) == (200, "stale")
    assert server.connections == 1
    connection.close()


async def test_after_the_server_closes_the_next_request_opens_a_new_connection(scripted):
    server, url = await scripted(ok(extra=b"Connection: close\r\n"), ok(cache=b"hit"))
    connection = Connection(url, "Token abc")
    get = connection.get_bytes("/x")
    assert await connection.send(get, timeout=5) == (200, "none")
    assert await connection.send(get, timeout=5) == (200, "hit")
    assert [number for number, _ in server.requests] == [1, 2]
    connection.close()


@pytest.mark.parametrize(
    ("broken", "error"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n[1, 2, CUT", ConnectionClosed),
        (b"NOT HTTP AT ALL\r\n\r\n", httptools.HttpParserError),
        (None, TimeoutError),  # never answered: a late answer must not be read as the next one's
    ],
    ids=["cut-short", "malformed", "timeout"],
)
async def test_after_a_failed_request_the_next_gets_its_own_answer_on_a_new_connection(
    scripted, broken, error
):
    server, url = await scripted(broken, ok(cache=b"hit"))
    connection = Connection(url, "Token abc")
    get = connection.get_bytes("/x")
    with pytest.raises(error):
        # A broken answer fails the request when it arrives, however late on a busy machine:
        # only the unanswered one waits for its timeout.
        await connection.send(get, timeout=0.5 if broken is None else 60)
    assert await connection.send(get, timeout=5) == (200, "hit")
    assert [number for number, _ in server.requests] == [1, 2]
    connection.close()
