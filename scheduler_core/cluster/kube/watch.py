"""List + watch, as client-go's Reflector does it, for one kind at a time.

``Reflector.run`` lists the kind (in pages), hands the whole list to its mirror's ``replace``,
then watches from the list's resourceVersion and hands each event to ``apply``, remembering
the resourceVersion of the last event. A stream that ends (the server's timeout, a dropped
connection) is resumed from that resourceVersion, so nothing is missed or seen twice; a
``410 Gone`` (the resourceVersion was compacted away) means events were lost, so the kind is
listed again and the mirror replaced.

The stream is read raw (``_preload_content=False``, JSON lines) rather than through the
client's ``Watch`` helper: the helper retries a 410 itself with the same stale resourceVersion
and deserialises every object into a model only to be turned back into a dict here.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from django import db
from kubernetes.client.rest import ApiException
from kubernetes.watch.watch import iter_resp_lines

logger = logging.getLogger(__name__)

LIST_PAGE = 500
WATCH_TIMEOUT_S = 300  # what kube-scheduler's informers ask for (5-10 minutes)


class Mirror(Protocol):
    kind: str

    def replace(self, objects: list[dict[str, Any]]) -> None: ...

    def apply(self, event_type: str, obj: dict[str, Any]) -> None: ...


class Expired(Exception):
    """410 Gone: the resourceVersion we watch from is no longer in the server's history."""


@dataclass
class ReflectorStats:
    lists: int = 0
    watches: int = 0
    events: int = 0
    expired: int = 0
    errors: int = 0
    last_error: str = ""
    synced: threading.Event = field(default_factory=threading.Event)


class Reflector:
    """Keep ``mirror`` in step with one kind. ``list_call(**kwargs)`` is a client list function
    (``CoreV1Api.list_node``, or a ``functools.partial`` of ``list_cluster_custom_object``)."""

    def __init__(
        self,
        list_call: Callable[..., Any],
        mirror: Mirror,
        *,
        field_selector: str | None = None,
        label_selector: str | None = None,
        watch_timeout_s: int = WATCH_TIMEOUT_S,
        backoff_s: float = 1.0,
        lock: threading.Lock | None = None,
    ) -> None:
        self.list_call, self.mirror = list_call, mirror
        self.selectors = {
            key: value
            for key, value in (("field_selector", field_selector), ("label_selector", label_selector))
            if value
        }
        self.watch_timeout_s, self.backoff_s = watch_timeout_s, backoff_s
        # Mirrors of different kinds write the same rows (a pod and its PodGroup): one at a time.
        self.lock = lock or threading.Lock()
        self.resource_version = ""
        self.stats = ReflectorStats()
        self._response = None

    @property
    def kind(self) -> str:
        return self.mirror.kind

    def run(self, stop: threading.Event) -> None:
        """List, then watch until ``stop`` is set; never raises."""
        try:
            self._run(stop)
        finally:
            db.connection.close()  # this thread's connection; Django opens one per thread

    def cancel(self) -> None:
        """End the watch request in flight now (``run`` then sees its stop event)."""
        response = self._response
        if response is not None:
            with contextlib.suppress(Exception):
                response.shutdown()

    def _run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                if not self.resource_version:
                    self.relist()
                self.watch_once(stop)
            except Expired:
                self.stats.expired += 1
                logger.info(
                    "%s watch: resourceVersion %s expired (410); listing again",
                    self.kind,
                    self.resource_version,
                )
                self.resource_version = ""
            except Exception as error:  # a dead API server must not kill the watcher
                if stop.is_set():
                    break  # cancelled: the stream was shut down on purpose
                self.stats.errors += 1
                db.close_old_connections()  # a PostgreSQL restart: reconnect on the next query
                self.stats.last_error = f"{type(error).__name__}: {error}"
                logger.warning(
                    "%s watch failed: %s; retrying in %.1fs", self.kind, self.stats.last_error, self.backoff_s
                )
                stop.wait(self.backoff_s)

    def relist(self) -> None:
        items, version, token = [], "", None
        while True:
            kwargs: dict[str, Any] = {"limit": LIST_PAGE, **self.selectors, "_preload_content": False}
            if token:
                kwargs["_continue"] = token
            body = _json(self.list_call(**kwargs))
            items.extend(body.get("items") or [])
            meta = body.get("metadata") or {}
            version = meta.get("resourceVersion") or version
            token = meta.get("continue")
            if not token:
                break
        with self.lock:
            self.mirror.replace(items)
        self.resource_version = version
        self.stats.lists += 1
        self.stats.synced.set()
        logger.info("%s: listed %d at resourceVersion %s", self.kind, len(items), version or "?")

    def watch_once(self, stop: threading.Event) -> None:
        """One watch request from the current resourceVersion, until it ends or ``stop``."""
        self.stats.watches += 1
        response = self.list_call(
            watch=True,
            resource_version=self.resource_version or None,
            timeout_seconds=self.watch_timeout_s,
            allow_watch_bookmarks=True,
            _preload_content=False,
            **self.selectors,
        )
        self._response = response
        try:
            for event in _events(response):
                if stop.is_set():
                    return
                self._handle(event)
        finally:
            self._response = None
            response.close()
            response.release_conn()

    def _handle(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Expired(obj.get("message") or "")
            raise ApiException(status=obj.get("code"), reason=f"{obj.get('reason')}: {obj.get('message')}")
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if kind != "BOOKMARK":
            with self.lock:
                self.mirror.apply(kind, obj)
            self.stats.events += 1
        if version:
            self.resource_version = version


def _json(response) -> dict[str, Any]:
    try:
        return json.loads(response.data)
    finally:
        response.release_conn()


def _events(response) -> Iterator[dict[str, Any]]:
    for line in iter_resp_lines(response):
        if line:
            yield json.loads(line)


def start(reflectors: list[Reflector], stop: threading.Event) -> list[threading.Thread]:
    """One daemon thread per reflector; they end when ``stop`` is set."""
    threads = [
        threading.Thread(target=reflector.run, args=(stop,), name=f"watch-{reflector.kind}", daemon=True)
        for reflector in reflectors
    ]
    for thread in threads:
        thread.start()
    return threads
