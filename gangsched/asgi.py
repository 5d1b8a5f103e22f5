"""ASGI entry point: plain HTTP goes to Django, websockets to the dashboard's consumers."""

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import django
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")


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
    (dashboard/api/cached_reads.py: ``fast_key``); a miss of a key another request is computing
    waits for that computation instead of computing it again (dashboard/api/coalesce.py);
    anything else goes to Django.
    """

    KEEP_IDLE_THREADS = 32
    #: Requests running Django at once in this process, reads (GET, HEAD) and writes counted
    #: apart; the others wait in the event loop. More threads only queue for the GIL and the
    #: database pool and slow down the event loop, which answers cached reads without a thread;
    #: and writes (slow under load: each commit waits for the disk) never take every slot, so a
    #: read the cache cannot answer does not wait behind a queue of submissions.
    MAX_READING = 8
    MAX_WRITING = 6

    def __init__(self):
        super().__init__()
        self._idle: list[ThreadPoolExecutor] = []
        self._running: tuple[asyncio.AbstractEventLoop, dict[bool, asyncio.Semaphore]] | None = None
        self._misses = Misses()

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":  # as Django's
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        key = fast_key(scope)
        if key is None:
            async with self._slots(reading=scope.get("method") in ("GET", "HEAD")):
                await self._run_in_thread(scope, receive, send)
            return
        generation = read_cache.generation(key[0])
        # What Django answered the same question (dashboard/api/cached_reads.py), or is answering.
        cached = read_cache.lookup_at(key, generation) or await self._misses.wait(key, generation)
        if cached is not None:
            await send({"type": "http.response.start", "status": cached.status, "headers": cached.headers})
            await send({"type": "http.response.body", "body": cached.body})
            return
        async with self._misses.computing(key, generation), self._slots(reading=True):
            await self._run_in_thread(scope, receive, send)

    def _slots(self, *, reading: bool) -> asyncio.Semaphore:
        """The running event loop's semaphore for reads or writes (tests run several loops)."""
        loop = asyncio.get_running_loop()
        if self._running is None or self._running[0] is not loop:
            reads, writes = asyncio.Semaphore(self.MAX_READING), asyncio.Semaphore(self.MAX_WRITING)
            self._running = (loop, {True: reads, False: writes})
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


# Initialise Django (the app registry) before importing anything that imports models.
django.setup(set_prefix=False)

from dashboard.api import read_cache  # noqa: E402
from dashboard.api.cached_reads import fast_key  # noqa: E402
from dashboard.api.coalesce import Misses  # noqa: E402

django_asgi_app = SyncChainASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from dashboard.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
