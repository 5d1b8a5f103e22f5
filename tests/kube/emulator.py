"""A Kubernetes API server for the backend's tests: kmock's emulator plus the real server's semantics.

There is no real API server on the test machines, so the Kubernetes backend is tested against
kmock 0.8's ``KubernetesEmulator`` (an in-memory object store served over real HTTP) through the
unmodified official client. kmock stores and serves objects; ``KubeEmulator`` adds, point by point,
what the real API server does and the backend depends on:

1. **resourceVersion, uid, creationTimestamp.** One integer counter, bumped by every write (create,
   patch, replace, status, binding, delete); the written object carries it as
   ``metadata.resourceVersion``; create sets ``uid`` and ``creationTimestamp``; a list answers the
   counter as ``metadata.resourceVersion``. The backend lists, then watches from the list's RV.
2. **Watch from a resourceVersion.** Each resource keeps its last ``history_limit`` events;
   ``?watch=true&resourceVersion=N`` streams only the events after N, so a watch resumed after a
   dropped stream neither loses nor repeats events. Without N (or with "0"): the current objects
   as ADDED, then live events. ``timeoutSeconds`` ends the stream. As the real watch cache does, a
   MODIFIED that moves an object into (out of) a selector is sent as ADDED (DELETED).
3. **410 Gone.** A watch from an RV older than the retained history answers HTTP 200 with one
   ERROR event (Status, reason Expired, code 410) and ends: the client must list again.
   ``compact()`` drops all history, as etcd compaction does.
4. **Dropped streams.** ``drop_watches()`` ends every open watch at once (an API server restart or
   a load balancer's idle timeout) to test the backend's resumption.
5. **fieldSelector and labelSelector** on list and watch. Fields: pods know ``metadata.name``,
   ``metadata.namespace``, ``spec.nodeName``, ``spec.schedulerName``, ``status.phase``; nodes
   ``metadata.name``, ``spec.unschedulable``; other kinds (custom objects) only the two metadata
   fields. Any other field is 400 BadRequest, as on the real server, so a selector the real
   server would refuse fails here too. Labels: ``=``, ``==``, ``!=``, ``in``, ``notin``, ``a``,
   ``!a``; commas AND the terms.
6. **pods/binding** (and ``bindings``): sets ``spec.nodeName`` and the PodScheduled condition,
   answers 201 with a Success Status; 409 Conflict when the pod is already bound (or being
   deleted), 404 when the pod does not exist. Client 37 needs ``_preload_content=False`` there.
7. **Optimistic concurrency.** A patch or a PUT (replace, which kmock lacks) whose body carries a
   ``metadata.resourceVersion`` other than the stored one is 409 Conflict: the backend's
   Lease-based leader election relies on it. A write that changes nothing is not a new version.
8. **Status subresource.** For kinds that have one (pods, CRDs added with it), writes to the main
   resource keep the stored status and ``/status`` writes change only the status; create drops the
   status (a pod starts as ``phase: Pending``). Delete is immediate (no kubelet grace period)
   unless finalizers hold it, then it sets ``deletionTimestamp``.
9. **Discovery.** The builtin kinds are kmock's bundled (k3s) discovery; ``add_crd`` declares a
   custom resource. A resource path of an undeclared kind (e.g. Volcano's group when the test did
   not add it) answers 404, as do its group's discovery paths.
10. **Fault injection.** ``fail_next(method, path_regex, status, times)``: the next matching
    requests answer that status (method is an HTTP method or a kmock action: list, watch, ...).

Known differences, none of which the backend relies on: merge and strategic merge patches are
both a JSON merge patch (lists are replaced, never merged by key); JSON patch, server-side apply,
``limit``/``continue`` paging and the namespaces resource are not served.

``KubeAPI`` runs the emulator and its server on a thread with its own event loop, so synchronous
tests (pytest-django's included) call the official client directly.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import copy
import datetime
import re
import threading
import uuid
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp.web
import attrs
import kmock
from kubernetes import client

Obj = dict[str, Any]
Event = tuple[int, str, Obj, Obj | None]  # resourceVersion, type, object, the object before
Selector = Callable[[Obj], bool]

REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 409: "Conflict", 410: "Expired"}
REASONS |= {422: "Invalid", 429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}
NAMESPACE_MISMATCH = "the namespace of the provided object does not match the namespace sent on the request"
MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"
POD_FIELDS = {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.schedulerName", "status.phase"}
FIELDS = {"pods": POD_FIELDS, "nodes": {"metadata.name", "spec.unschedulable"}}
LABEL_TERM = re.compile(
    r"\s*(?:!\s*(?P<absent>[\w./-]+)|(?P<setkey>[\w./-]+)\s+(?P<setop>in|notin)\s*\((?P<values>[^()]*)\)"
    r"|(?P<key>[\w./-]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[\w./-]*))?)\s*"
)


class ApiError(Exception):
    """An answer of the API server other than success, with the real server's Status body."""

    def __init__(self, code: int, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.reason = code, message, reason or REASONS.get(code, "Unknown")

    def status(self) -> Obj:
        return status_body(self.code, self.message, self.reason)

    def response(self) -> aiohttp.web.Response:
        headers = {"Retry-After": "1"} if self.code == 429 else None
        return aiohttp.web.json_response(self.status(), status=self.code, headers=headers)


def status_body(code: int, message: str = "", reason: str = "") -> Obj:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": code}
    if code >= 300:
        return body | {"status": "Failure", "message": message, "reason": reason}
    return body | {"status": "Success"}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: dicts merge recursively, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def with_status(obj: Obj, source: Obj) -> Obj:
    """``obj`` with the status of ``source`` (or none if it has none)."""
    result = {key: value for key, value in obj.items() if key != "status"}
    return result | ({"status": source["status"]} if "status" in source else {})


def field_value(obj: Obj, path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def parse_selectors(params: dict[str, str], plural: str) -> Selector:
    """One predicate for ``fieldSelector`` and ``labelSelector``; 400 for what the server refuses."""
    checks: list[Selector] = []
    allowed = FIELDS.get(plural, {"metadata.name", "metadata.namespace"})
    for term in filter(None, (t.strip() for t in params.get("fieldSelector", "").split(","))):
        match = re.fullmatch(r"([\w.]+)\s*(==|!=|=)\s*(.*)", term)
        if not match:
            raise ApiError(400, f"invalid field selector: {term!r}")
        field, op, value = match.groups()
        if field not in allowed:
            raise ApiError(400, f"field label not supported: {field}")
        checks.append(lambda o, f=field, v=value, neg=op == "!=": (field_value(o, f) == v) != neg)
    for term in filter(str.strip, re.split(r",(?![^(]*\))", params.get("labelSelector", ""))):
        m = LABEL_TERM.fullmatch(term)
        if not m:
            raise ApiError(400, f"unable to parse requirement: {term!r}")
        checks.append(label_check(m))
    return lambda obj: all(check(obj) for check in checks)


def label_check(m: re.Match[str]) -> Selector:
    def labels(obj: Obj) -> dict[str, str]:
        return obj.get("metadata", {}).get("labels") or {}

    if m["absent"]:
        return lambda o: m["absent"] not in labels(o)
    if m["setkey"]:
        values = {v.strip() for v in m["values"].split(",")}
        if m["setop"] == "in":
            return lambda o: labels(o).get(m["setkey"]) in values
        return lambda o: labels(o).get(m["setkey"]) not in values
    if not m["op"]:
        return lambda o: m["key"] in labels(o)
    if m["op"] == "!=":
        return lambda o: labels(o).get(m["key"]) != m["value"]
    return lambda o: labels(o).get(m["key"]) == m["value"]


def now_rfc3339() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@attrs.define(kw_only=True, eq=False)
class Watch:
    resource: kmock.resource
    queue: asyncio.Queue[Event | None] = attrs.field(factory=asyncio.Queue)


@attrs.define(kw_only=True, eq=False)
class Fault:
    method: str
    path: re.Pattern[str]
    status: int
    times: int


@attrs.define(kw_only=True)
class KubeEmulator(kmock.KubernetesEmulator):
    """kmock's emulator with the real API server's semantics listed in this module's docstring."""

    history_limit: int = 1000
    _rv: int = attrs.field(default=0, init=False)
    _compacted: int = attrs.field(default=0, init=False)  # every RV below is 410
    _history: dict[kmock.resource, collections.deque[Event]] = attrs.field(factory=dict, init=False)
    _evicted: dict[kmock.resource, int] = attrs.field(factory=dict, init=False)  # per kind: below is 410
    _watches: set[Watch] = attrs.field(factory=set, init=False)
    _faults: list[Fault] = attrs.field(factory=list, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        with warnings.catch_warnings():  # kmock 0.8 reads its bundled file with a deprecated call
            warnings.simplefilter("ignore", DeprecationWarning)
            self.resources.load_bundled()
        self.fallback["get /apis/"] << self._serve_apis  # the client asks with the slash
        self.fallback["get /api/"] << self._serve_api

    @property
    def resource_version(self) -> int:
        """The current global resourceVersion (what a list would answer now)."""
        return self._rv

    # ------------------------------------------------------------ test controls (on the loop)

    def add_crd(self, group: str, version: str, plural: str, kind: str, namespaced: bool = True) -> None:
        self.resources[kmock.resource(group, version, plural)] = kmock.ResourceInfo(
            kind=kind, singular=kind.lower(), namespaced=namespaced, subresources={"status"},
            verbs={"create", "delete", "get", "list", "patch", "update", "watch"},
        )  # fmt: skip

    def compact(self) -> None:
        self._compacted = self._rv
        self._history.clear()

    def drop_watches(self) -> None:
        for watch in self._watches:
            watch.queue.put_nowait(None)
        self._watches.clear()

    def fail_next(self, method: str, path_regex: str, status: int, times: int = 1) -> None:
        """The next ``times`` requests whose method (or kmock action: list, watch, fetch, create,
        update, delete) is ``method`` and whose path matches ``path_regex`` answer ``status``. A 429
        carries ``Retry-After: 1`` as the real server's does, and client 37 retries a GET once then."""
        fault = Fault(method=method.upper(), path=re.compile(path_regex), status=status, times=times)
        self._faults.append(fault)

    def resource_of(self, api_version: str, kind: str) -> kmock.resource:
        group, _, version = api_version.rpartition("/")
        for resource in self.resources:
            if (resource.group, resource.version, self.resources[resource].kind) == (group, version, kind):
                return resource
        raise LookupError(f"no resource of kind {kind} in {api_version}")

    def live(self, resource: kmock.resource, namespace: str | None, name: str) -> Obj | None:
        key = (resource, namespace, name)
        stored = self._objects[key] if key in self._objects else None  # noqa: SIM401 (not a Mapping)
        return None if stored is None or stored.deleted else copy.deepcopy(stored.raw)

    def listed(self, resource: kmock.resource, namespace: str | None = None) -> list[Obj]:
        found = [
            copy.deepcopy(obj.raw)
            for (res, ns, _), obj in self._objects.items()
            if res == resource and not obj.deleted and namespace in (None, ns)
        ]
        return sorted(found, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))

    def write(self, resource: kmock.resource, obj: Obj, *, delete: bool = False) -> Obj:
        """Store a new state of ``obj`` (or its deletion) at the next resourceVersion; tell the watches."""
        meta = obj["metadata"]
        key = (resource, meta.get("namespace"), meta["name"])
        before = self.live(*key)
        if before is None:
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now_rfc3339())
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            delete = True  # the last finalizer is gone: the object goes
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        if delete:
            self._objects[key].delete()
        elif key in self._objects:
            self._objects[key].create(copy.deepcopy(obj))
        else:
            self._objects[key] = copy.deepcopy(obj)
        kind = "DELETED" if delete else "MODIFIED" if before else "ADDED"
        event = (self._rv, kind, copy.deepcopy(obj), before)
        history = self._history.setdefault(resource, collections.deque(maxlen=self.history_limit))
        if len(history) == history.maxlen:
            self._evicted[resource] = history[0][0]
        history.append(event)
        for watch in self._watches:
            if watch.resource == resource:
                watch.queue.put_nowait(event)
        return obj

    # ------------------------------------------------------------ request dispatch

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        try:
            self._inject_fault(request)
            resource = request.resource
            if resource is None or resource.plural is None:  # discovery: kmock serves it
                return await super()._handle(request)
            if resource not in self.resources:
                raise ApiError(404, "the server could not find the requested resource")
            if request.method == kmock.method.POST and request.subresource == "binding":
                return self._bind(request.namespace, request.name, request.data or {})
            if request.method == kmock.method.POST and resource.plural == "bindings" and not request.name:
                data = request.data or {}
                return self._bind(request.namespace, data.get("metadata", {}).get("name"), data)
            if request.action == kmock.action.CREATE:
                return aiohttp.web.json_response(self._create(request), status=201)
            if request.method in (kmock.method.PATCH, kmock.method.PUT) and request.name:
                return aiohttp.web.json_response(self._update(request))
            if request.action == kmock.action.DELETE and request.name:
                return aiohttp.web.json_response(self._delete(request))
            return await apps_handle(self, request)  # get, list, watch: kmock's routing to _serve_*
        except ApiError as error:
            return error.response()

    def _inject_fault(self, request: kmock.Request) -> None:
        for fault in self._faults:
            verbs = {request.method.value, request.action.value if request.action else ""}
            if fault.method in verbs and fault.path.search(request.url.path):
                fault.times -= 1
                if not fault.times:
                    self._faults.remove(fault)
                raise ApiError(fault.status, f"injected fault: {fault.status}")

    def _not_found(self, request: kmock.Request, name: str | None = None) -> ApiError:
        assert request.resource is not None
        group = f".{request.resource.group}" if request.resource.group else ""
        return ApiError(404, f'{request.resource.plural}{group} "{name or request.name}" not found')

    def _create(self, request: kmock.Request) -> Obj:
        resource, obj = request.resource, copy.deepcopy(request.data or {})
        assert resource is not None
        info, meta = self.resources[resource], obj.setdefault("metadata", {})
        if info.namespaced:
            if meta.get("namespace", request.namespace) != request.namespace:
                raise ApiError(400, NAMESPACE_MISMATCH)
            meta["namespace"] = request.namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        if not meta.get("name"):
            raise ApiError(422, "name or generateName is required")
        if self.live(resource, meta.get("namespace"), meta["name"]) is not None:
            group = f".{resource.group}" if resource.group else ""
            raise ApiError(409, f'{resource.plural}{group} "{meta["name"]}" already exists', "AlreadyExists")
        obj.setdefault("apiVersion", f"{resource.group}/{resource.version}".lstrip("/"))
        obj.setdefault("kind", info.kind)
        for key in ("uid", "resourceVersion", "deletionTimestamp"):
            meta.pop(key, None)
        if "status" in info.subresources:
            obj.pop("status", None)
        if resource == kmock.resource("v1/pods"):
            obj["status"] = {"phase": "Pending"}
        return self.write(resource, obj)

    def _update(self, request: kmock.Request) -> Obj:
        """PATCH (a merge patch) or PUT (replace), of the object or of its status."""
        resource, body = request.resource, request.data
        assert resource is not None
        old = self.live(resource, request.namespace, request.name)
        if old is None:
            raise self._not_found(request)
        if not isinstance(body, dict):
            raise ApiError(415, "only merge patches and full objects are served")
        if request.subresource not in (None, "status"):
            raise ApiError(404, "the server could not find the requested resource")
        wanted = (body.get("metadata") or {}).get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise ApiError(
                409, f'Operation cannot be fulfilled on {resource.plural} "{request.name}": {MODIFIED}'
            )
        new = merge_patch(old, body) if request.method == kmock.method.PATCH else copy.deepcopy(body)
        if request.subresource == "status":
            new = with_status(old, new)
        elif "status" in self.resources[resource].subresources:
            new = with_status(new, old)
        meta = new["metadata"] = dict(new.get("metadata") or {})  # never old's own dict
        for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "resourceVersion"):
            meta.pop(key, None)
            if key in old["metadata"]:
                meta[key] = old["metadata"][key]
        return old if new == old else self.write(resource, new)

    def _delete(self, request: kmock.Request) -> Obj:
        resource = request.resource
        assert resource is not None
        old = self.live(resource, request.namespace, request.name)
        if old is None:
            raise self._not_found(request)
        preconditions = (request.data or {}).get("preconditions") or {}
        for key in ("uid", "resourceVersion"):
            if preconditions.get(key) and preconditions[key] != old["metadata"][key]:
                raise ApiError(409, f"Precondition failed: {key} in precondition: {preconditions[key]}, "
                               f"{key} in object meta: {old['metadata'][key]}")  # fmt: skip
        if not old["metadata"].get("finalizers"):
            return self.write(resource, old, delete=True)
        if not old["metadata"].get("deletionTimestamp"):
            old["metadata"]["deletionTimestamp"] = now_rfc3339()
            return self.write(resource, old)
        return old

    def _bind(self, namespace: str | None, name: str | None, binding: Obj) -> aiohttp.web.Response:
        pods = kmock.resource("v1/pods")
        pod = self.live(pods, namespace, name or "")
        node = (binding.get("target") or {}).get("name")
        if pod is None:
            raise ApiError(404, f'pods "{name}" not found')
        if not node:
            raise ApiError(422, "Binding.target.name: Required value")
        if pod["metadata"].get("deletionTimestamp"):
            raise ApiError(409, f"pod {name} is being deleted, cannot be assigned to a host")
        if pod.setdefault("spec", {}).get("nodeName"):
            raise ApiError(409, f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"')
        pod["spec"]["nodeName"] = node
        status = pod.setdefault("status", {})
        conditions = [c for c in status.get("conditions", []) if c.get("type") != "PodScheduled"]
        status["conditions"] = [*conditions, {"type": "PodScheduled", "status": "True"}]
        self.write(pods, pod)
        return aiohttp.web.json_response(status_body(201), status=201)

    # ------------------------------------------------------------ reads (kmock's fallbacks)

    async def _serve_fetch(self, request: kmock.Request) -> kmock.Payload:
        assert request.resource is not None
        obj = self.live(request.resource, request.namespace, request.name or "")
        if obj is None:
            raise self._not_found(request)
        return obj

    async def _serve_list(self, request: kmock.Request) -> kmock.Payload:
        resource = request.resource
        assert resource is not None
        matches = parse_selectors(dict(request.params), resource.plural or "")
        info = self.resources[resource]
        return {
            "kind": f"{info.kind}List",
            "apiVersion": f"{resource.group}/{resource.version}".lstrip("/"),
            "metadata": {"resourceVersion": str(self._rv)},
            "items": [obj for obj in self.listed(resource, request.namespace) if matches(obj)],
        }

    async def _serve_watch(self, request: kmock.Request) -> kmock.Payload:
        resource, params = request.resource, dict(request.params)
        assert resource is not None
        matches = parse_selectors(params, resource.plural or "")
        since = params.get("resourceVersion", "")
        if since not in ("", "0") and not since.isdigit():
            raise ApiError(400, f"invalid resource version: {since}")
        deadline = asyncio.get_running_loop().time() + float(params.get("timeoutSeconds") or "inf")
        return self._stream(request, resource, int(since or 0), matches, deadline)

    async def _stream(
        self,
        request: kmock.Request,
        resource: kmock.resource,
        since: int,
        matches: Selector,
        deadline: float,
    ) -> AsyncIterator[Obj | bytes]:
        yield b""  # send the headers now, even if nothing happens
        horizon = max(self._compacted, self._evicted.get(resource, 0))
        if since and since < horizon:
            error = ApiError(410, f"too old resource version: {since} ({horizon})")
            yield {"type": "ERROR", "object": error.status()}
            return
        watch = Watch(resource=resource)
        self._watches.add(watch)  # registered with the backlog at once: no gap, no duplicate
        if since:
            backlog = [event for event in self._history.get(resource, ()) if event[0] > since]
        else:
            backlog = [(self._rv, "ADDED", obj, None) for obj in self.listed(resource, request.namespace)]
        try:
            for event in backlog:
                if seen := as_seen(event, request.namespace, matches):
                    yield seen
            while (remaining := deadline - asyncio.get_running_loop().time()) > 0:
                try:
                    event = await asyncio.wait_for(watch.queue.get(), min(remaining, 3600))
                except TimeoutError:
                    continue
                if event is None:  # dropped
                    return
                if seen := as_seen(event, request.namespace, matches):
                    yield seen
        finally:
            self._watches.discard(watch)


def as_seen(event: Event, namespace: str | None, matches: Selector) -> Obj | None:
    """The event as a watch with this namespace and selectors sees it, or None if it does not."""
    _, kind, obj, before = event

    def visible(o: Obj | None) -> bool:
        return o is not None and namespace in (None, o["metadata"].get("namespace")) and matches(o)

    now, then = visible(obj), visible(before)
    if kind == "MODIFIED":
        kind = "MODIFIED" if now and then else "ADDED" if now else "DELETED" if then else ""
    elif not now:
        kind = ""
    return {"type": kind, "object": obj} if kind else None


async def apps_handle(emulator: KubeEmulator, request: kmock.Request) -> aiohttp.web.StreamResponse:
    """kmock's request routing (reactions, then the ``_serve_*`` fallbacks), past the parent's
    ``_handle``, whose own object writes ``KubeEmulator`` replaces."""
    return await kmock.RawHandler._handle(emulator, request)


class KubeAPI:
    """A started ``KubeEmulator`` and its HTTP server, on a thread of their own.

    Every helper runs on the emulator's loop, so tests may call them from any thread. Resources
    are named as kmock parses them: ``"v1/pods"``, ``"scheduling.x-k8s.io/v1alpha1/podgroups"``.
    """

    def __init__(self, history_limit: int = 1000) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kube-api", daemon=True)
        self._thread.start()
        self._stack = contextlib.AsyncExitStack()
        self.emulator: KubeEmulator = self._call(self._start, history_limit)

    async def _start(self, history_limit: int) -> KubeEmulator:
        emulator = await self._stack.enter_async_context(KubeEmulator(history_limit=history_limit))
        server = await self._stack.enter_async_context(kmock.Server(emulator))
        self.url = str(server.url).rstrip("/")
        return emulator

    def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        async def run() -> Any:
            result = fn(*args, **kwargs)
            return await result if asyncio.iscoroutine(result) else result

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=30)

    def api_client(self) -> client.ApiClient:
        """A fresh official client for this server (no auth, as a kubeconfig with no user)."""
        return client.ApiClient(client.Configuration(host=self.url))

    def create(self, obj: Obj) -> Obj:
        """Store ``obj`` as it is (status included), as a kubelet or controller would have written it;
        replaces an object of the same name. Returns it with its metadata filled in."""

        def put() -> Obj:
            em, new = self.emulator, copy.deepcopy(obj)
            resource = em.resource_of(new["apiVersion"], new["kind"])
            if em.resources[resource].namespaced:
                new["metadata"].setdefault("namespace", "default")
            old = em.live(resource, new["metadata"].get("namespace"), new["metadata"]["name"]) or {}
            for key in ("uid", "creationTimestamp"):
                if key in old.get("metadata", {}):
                    new["metadata"][key] = old["metadata"][key]
            return em.write(resource, new)

        return self._call(put)

    def patch(self, resource: str, name: str, changes: Obj, namespace: str | None = None) -> Obj:
        """Merge ``changes`` into a stored object (status included), e.g. a pod turning Running."""
        res = kmock.resource(resource)
        patched = lambda: merge_patch(self._live(res, namespace, name), changes)  # noqa: E731
        return self._call(lambda: self.emulator.write(res, patched()))

    def delete(self, resource: str, name: str, namespace: str | None = None) -> None:
        res = kmock.resource(resource)
        self._call(lambda: self.emulator.write(res, self._live(res, namespace, name), delete=True))

    def _live(self, resource: kmock.resource, namespace: str | None, name: str) -> Obj:
        obj = self.emulator.live(resource, namespace, name)
        if obj is None:
            raise LookupError(f"{resource.plural} {namespace}/{name} does not exist")
        return obj

    def get(self, resource: str, name: str, namespace: str | None = None) -> Obj | None:
        return self._call(self.emulator.live, kmock.resource(resource), namespace, name)

    def objects(self, resource: str, namespace: str | None = None) -> list[Obj]:
        return self._call(self.emulator.listed, kmock.resource(resource), namespace)

    def requests(self) -> list[kmock.Request]:
        """Every request served so far (kmock's records: method, params, data, action, ...)."""
        return self._call(lambda: list(self.emulator))

    @property
    def resource_version(self) -> int:
        return self._call(lambda: self.emulator.resource_version)

    def drop_watches(self) -> None:
        self._call(self.emulator.drop_watches)

    def compact(self) -> None:
        self._call(self.emulator.compact)

    def fail_next(self, method: str, path_regex: str, status: int, times: int = 1) -> None:
        self._call(self.emulator.fail_next, method, path_regex, status, times)

    def add_crd(self, group: str, version: str, plural: str, kind: str, namespaced: bool = True) -> None:
        self._call(self.emulator.add_crd, group, version, plural, kind, namespaced)

    def close(self) -> None:
        async def stop() -> None:
            self.emulator.drop_watches()
            await self._stack.aclose()

        try:
            self._call(stop)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()
