"""ASGI entry point: plain HTTP goes to Django, websockets to the dashboard's consumers."""

import asyncio
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")

#: How long a thread may hold the GIL while another waits for it (Python's default: 5 ms). The
#: event loop, which answers cached reads, and each Django thread back from a query wait for
#: the GIL behind the threads computing; at 1 ms the cached reads' p99 under bench/load.py fell
#: from 113-222 ms to 75-102 ms in two of three runs (CHANGELOG.md). Set on import: this
#: module is the web process's entry point.
GIL_SWITCH_INTERVAL_S = 0.001
sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)


async def _pause(seconds: float) -> None:
    """``asyncio.sleep``, named so that a test can see the pauses of reads behind writes."""
    await asyncio.sleep(seconds)


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler with the middleware and the view run as one synchronous call.

    Every view here is synchronous (DRF, the pages), and so is every middleware in effect: under
    ASGI Django runs each dual-mode middleware's ``process_request`` and ``process_response`` in
    a thread hop of its own and the view in another, 17 hops per request with ours. That cost
    more than the gang list itself; here the whole chain is built as under WSGI and entered
    through one ``sync_to_async`` (thread-sensitive, as Django would call the view).

    Each request's synchronous code still runs in a thread of its own, but the threads are
    reused: Django enters a new ``ThreadSensitiveContext`` per request, for which asgiref
    started a thread and then a second one to join it, two thread starts per request. Here a
    request takes an idle one-thread executor (or makes one) and gives it back when done, as a
    WSGI server's thread pool does; at most ``KEEP_IDLE_THREADS`` idle ones are kept, and at most
    ``MAX_READING`` reads and ``MAX_WRITING`` writes run at once (the rest wait, in the event
    loop).

    A gang read the API's read cache holds for a token it knows is answered before any of this,
    in the event loop, with the bytes and headers Django sent for the same question
    (dashboard/api/cached_reads.py: ``fast_key``); so is an answer only the scheduler's progress
    made stale, for a second at most, while Django recomputes it in the background
    (dashboard/api/read_cache.py); a miss of a key another request is computing waits for that
    computation instead of computing it again (dashboard/api/coalesce.py); a write through the
    API is answered once the writer's cached answers are computed again (``_write``); anything
    else goes to Django.
    """

    KEEP_IDLE_THREADS = 32
    #: Requests running Django at once in this process, reads (GET, HEAD), writes and background
    #: recomputations of stale entries counted apart; the others wait in the event loop. More
    #: threads only queue for the GIL: a thread back from the database waits up to the switch
    #: interval (5 ms) for it at each query while others compute, and so does the event loop,
    #: which answers cached reads without a thread (with 8 reads and 6 writes a 4 ms list took
    #: 50-200 ms under bench/load.py; docs/operations.md). Writes never take every slot, so a
    #: read the cache cannot answer does not wait behind a queue of submissions, and a reader
    #: who waits is never queued behind recomputations nobody waits for.
    MAX_READING = 2
    MAX_WRITING = 2
    MAX_REFRESHING = 2
    #: Seconds an answer from memory waits while writes queue for this process's write slots.
    #: Cached reads cost the event loop little each, but 200 clients reading back to back keep
    #: it, and with it the GIL and a core, busy: the submissions' threads and PostgreSQL then
    #: got what was left, and a submission waited 2.6 s (p50) for a slot. Pausing the reads
    #: only while writes queue gives writes the priority (the apiserver's priority and fairness
    #: keeps mutating requests apart for the same reason): bench/load.py's submission p99 went
    #: from 3.4 s to 1.1 s, its read p99 from 44 to 98 ms (CHANGELOG.md, docs/benchmarks.md). An
    #: idle or lightly used server never queues a write, and never pauses a read.
    WRITE_PRIORITY_PAUSE_S = 0.02

    def __init__(self):
        super().__init__()
        self._idle: list[ThreadPoolExecutor] = []
        self._running: tuple[asyncio.AbstractEventLoop, dict[bool | None, asyncio.Semaphore]] | None = None
        self._misses = Misses()
        self._refreshing: set[asyncio.Task] = set()
        self._renewing: set[str] = set()
        self._writes_waiting = 0

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":  # as Django's
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        key = fast_key(scope)
        if key is None:
            writer = writer_scope(scope)
            if writer is not None:
                await self._write(scope, receive, send, writer)
                return
            async with self._slots(reading=scope.get("method") in ("GET", "HEAD")):
                await self._run_in_thread(scope, receive, send)
            return
        self._renew_token(scope)
        generation = read_cache.generation(key[0])
        # What Django answered the same question (dashboard/api/cached_reads.py), or is answering.
        how, cached = b"hit", read_cache.lookup_at(key, generation)
        if cached is None:
            how, stale = b"stale", read_cache.lookup_stale(key, generation)
            if stale is not None:
                cached, due = stale
                if due:
                    self._refresh(scope, key, generation)
            else:
                how, cached = b"coalesced", await self._misses.wait(key, generation)
        if cached is not None:
            if self._writes_waiting:
                await _pause(self.WRITE_PRIORITY_PAUSE_S)
            headers = (*cached.headers, (CACHE_HEADER, how))
            await send({"type": "http.response.start", "status": cached.status, "headers": headers})
            await send({"type": "http.response.body", "body": cached.body})
            return
        async with self._misses.computing(key, generation), self._slots(reading=True):
            await self._run_in_thread(scope, receive, _with_header(send, b"miss"))

    async def _write(self, scope, receive, send, writer: str) -> None:
        """A write (a submission, a kill) whose answer is held until the writer's newest cached
        answers are computed again (read_cache.requests_of): a submitter who submits and then
        lists is answered the list from the cache, with the new gang, instead of computing it
        then. The cost moves from the read to the write, which was going to cause it."""
        held = _Held(send)
        slots = self._slots(reading=False)
        self._writes_waiting += 1
        try:
            await slots.acquire()
        finally:
            self._writes_waiting -= 1
        try:
            await self._run_in_thread(scope, receive, held)
        finally:
            slots.release()
        if held.succeeded:
            generation = read_cache.generation(writer)  # moved by the write (changed_here)
            for key, request in read_cache.requests_of(writer):
                if read_cache.lookup_at(key, generation) is None and not self._misses.running(key):
                    await self._recompute(request, key, generation)
        await held.flush()

    def _renew_token(self, scope) -> None:
        """Look a token up again in the background before its cache entry expires (one lookup
        at a time per token), so its user's reads stay on the fast path."""
        token = token_renewal_due(scope)
        if token is None or token in self._renewing:
            return
        self._renewing.add(token)
        task = asyncio.get_running_loop().create_task(database_sync_to_async(token_renew)(token))
        self._refreshing.add(task)
        task.add_done_callback(lambda done: (self._refreshing.discard(done), self._renewing.discard(token)))

    def _refresh(self, scope, key: tuple, generation: tuple) -> None:
        """Recompute a stale entry in the background, once: Django answers the same request
        again (as its user: authentication and scope are checked anew) and ``StoreMiddleware``
        stores the answer; nobody waits for it. One at a time per key: while one runs, later
        reads are answered from the stale entry (or the one it stores)."""
        if self._misses.running(key):
            return
        task = asyncio.get_running_loop().create_task(self._recompute(scope, key, generation))
        self._refreshing.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._refreshing.discard)

    async def _recompute(self, scope, key: tuple, generation: tuple) -> None:
        async with self._misses.computing(key, generation), self._slots(reading=None):
            await self._run_in_thread(scope, _empty_body(), _discard)

    def _slots(self, *, reading: bool | None) -> asyncio.Semaphore:
        """The running event loop's semaphore for reads, writes or (None) background
        recomputations (tests run several loops)."""
        loop = asyncio.get_running_loop()
        if self._running is None or self._running[0] is not loop:
            slots = {
                True: asyncio.Semaphore(self.MAX_READING),
                False: asyncio.Semaphore(self.MAX_WRITING),
                None: asyncio.Semaphore(self.MAX_REFRESHING),
            }
            self._running = (loop, slots)
        return self._running[1][reading]

    async def _run_in_thread(self, scope, receive, send):
        executor = self._idle.pop() if self._idle else ThreadPoolExecutor(1, "request")
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            # A view still running after its client left finishes first: the executor's one
            # thread takes the next request's work after it, in order.
            if len(self._idle) < self.KEEP_IDLE_THREADS:
                self._idle.append(executor)
            else:
                executor.shutdown(wait=False)


#: Says how a cacheable gang read was answered: ``hit`` (from the read cache), ``stale`` (a
#: cached answer behind the scheduler's latest progress, being recomputed), ``coalesced`` (another
#: request's computation of the same answer), ``miss`` (computed for this request).
CACHE_HEADER = b"x-cache"


def _with_header(send, value: bytes):
    async def sending(message):
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), (CACHE_HEADER, value)]}
        await send(message)

    return sending


class _Held:
    """An ASGI ``send`` that keeps a response's messages until ``flush``."""

    def __init__(self, send):
        self._send = send
        self._messages: list[dict] = []
        self.succeeded = False

    async def __call__(self, message) -> None:
        if message["type"] == "http.response.start":
            self.succeeded = 200 <= message["status"] < 300
        self._messages.append(message)

    async def flush(self) -> None:
        for message in self._messages:
            await self._send(message)
        self._messages.clear()


def _empty_body():
    """The ``receive`` of a background recomputation: the GET's empty body, then nothing (Django
    cancels its wait for a disconnect when the response is done)."""
    sent = False

    async def receive():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()

    return receive


async def _discard(message) -> None:
    """The ``send`` of a background recomputation: the answer is stored, not sent."""


# Initialise Django (the app registry) before importing anything that imports models.
django.setup(set_prefix=False)

from dashboard.api import read_cache  # noqa: E402
from dashboard.api.cached_reads import fast_key, token_renew, token_renewal_due, writer_scope  # noqa: E402
from dashboard.api.coalesce import Misses  # noqa: E402

django_asgi_app = SyncChainASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.db import database_sync_to_async  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from dashboard.routing import websocket_urlpatterns  # noqa: E402
from gangsched import gc_policy  # noqa: E402
from gangsched.web_pool import pool_web_connections  # noqa: E402
from scheduler_core.db.session_names import name_web_sessions  # noqa: E402

_background: set[asyncio.Task] = set()  # the loop keeps only weak references to tasks

router = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)


async def application(scope, receive, send):
    """The router, and the ASGI lifespan: at startup this process takes its database connections
    from a pool unless configured otherwise (gangsched/web_pool.py), names its database sessions
    (scheduler_core/db/session_names.py), so the read cache knows its own writes' notifications,
    and starts its garbage collection policy (gangsched/gc_policy.py)."""
    if scope["type"] != "lifespan":
        return await router(scope, receive, send)
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await sync_to_async(pool_web_connections)()
            await sync_to_async(name_web_sessions)()  # after: it closes the pool, to name its connections
            _background.add(asyncio.get_running_loop().create_task(gc_policy.run()))
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            for task in _background:
                task.cancel()
            _background.clear()
            await send({"type": "lifespan.shutdown.complete"})
            return
