"""Serving gang reads from the read cache (read_cache.py): the key of a request, the view's
lookup, the middleware that stores what Django answered, and the ASGI fast path.

The key is the requester's scope plus everything of the request but who sent it: the scheme,
path and query, and every header except the credentials (``Authorization``, ``Cookie``) and the framing
ones. So a cached answer is replayed only for the same question, asked through the same host,
scheme and proxy headers, with the same ``Accept``, by a user of the same scope.

- The view (``cached_response``) computes the scope from the authenticated user, answers a hit
  with the stored bytes, and on a miss marks the request with its key and the generation read
  before the response is computed.
- ``StoreMiddleware``, first in ``MIDDLEWARE`` so it sees the final headers every other
  middleware added, stores a marked 200 in JSON that sets no cookie (never the browsable API's
  HTML, which shows who is signed in and their CSRF token).
- ``fast_key`` is asked by the ASGI handler (gangsched/asgi.py) before Django runs: a GET with
  a token the token cache holds, of a user whose scope the view remembered, is answered from the
  cache in the event loop, with the stored headers and body: what Django would have sent. On a
  miss, concurrent requests for the same key share one computation (coalesce.py).
"""

from __future__ import annotations

from django.http import HttpResponse

from . import authentication, invalidation, read_cache
from .permissions import sees_all_gangs

#: Cached reads live under this path (the gang list and details); the fast path looks no further.
PREFIX = "/api/v1/gangs/"
#: Headers left out of the key: who asks (the scope stands for them) and how bytes travel.
UNKEYED = frozenset({b"authorization", b"cookie", b"content-length", b"connection", b"keep-alive"})
_MARK = "_gangsched_read_cache"


def key_of(scope: str, scheme: str, path: str, query: bytes, headers) -> tuple:
    """``scheme``: how the request reached the server (an HTTPS-only site redirects plain HTTP,
    and links in answers name it)."""
    kept = tuple(sorted((name.lower(), value) for name, value in headers if name.lower() not in UNKEYED))
    return (scope, scheme, path, query, kept)


def _request_headers(request) -> list[tuple[bytes, bytes]]:
    asgi = getattr(request, "scope", None)
    if isinstance(asgi, dict) and "headers" in asgi:
        return list(asgi["headers"])
    headers = []  # WSGI or the test client: rebuilt from META as ASGI would have sent them
    for name, value in request.META.items():
        if name.startswith("HTTP_") or name in ("CONTENT_TYPE",):
            header = name.removeprefix("HTTP_").replace("_", "-").lower()
            headers.append((header.encode("latin-1"), str(value).encode("latin-1")))
    return headers


def _request_key(request, scope: str) -> tuple:
    asgi = getattr(request, "scope", None)
    if isinstance(asgi, dict) and "query_string" in asgi:
        query, scheme = asgi["query_string"], asgi.get("scheme", "http")
    else:
        query = request.META.get("QUERY_STRING", "").encode("latin-1")
        scheme = request.META.get("wsgi.url_scheme", "http")
    return key_of(scope, scheme, request.path, query, _request_headers(request))


def user_scope(request) -> str:
    """The requester's scope; for a token the token cache holds, remembered for the fast path
    no longer than the token cache keeps the token."""
    token = getattr(request, "auth", None)
    key = getattr(token, "key", None)
    if key:
        remembered = read_cache.scope_recall(key, authentication.now())
        if remembered is not None:
            return remembered
    user = request.user
    scope = read_cache.scope_of(sees_all=sees_all_gangs(user), username=user.get_username())
    entry = authentication.cached_entry(key) if key else None
    if entry is not None:
        read_cache.scope_remember(key, entry.expires, scope)
    return scope


def cached_response(request) -> HttpResponse | None:
    """A hit as an HttpResponse, or None after marking the request for ``StoreMiddleware``
    (the view may still call ``not_cached``)."""
    if not read_cache.enabled():
        return None
    invalidation.ensure_listening()
    if not read_cache.active() or request.method != "GET":
        return None
    scope = user_scope(request)
    key = _request_key(request, scope)
    entry = read_cache.lookup(key)
    if entry is not None:
        response = HttpResponse(entry.body, status=entry.status)
        for name, value in entry.headers:
            response.headers[name.decode("latin-1")] = value.decode("latin-1")
        return response
    django_request = getattr(request, "_request", request)  # DRF's Request wraps Django's
    setattr(django_request, _MARK, (key, read_cache.generation(scope)))
    return None


def not_cached(request) -> None:
    """The view found it may not cache this answer after all: a gang in a group, whose detail
    shows the group's other gangs, maybe another submitter's (their changes notify them)."""
    django_request = getattr(request, "_request", request)
    if hasattr(django_request, _MARK):
        delattr(django_request, _MARK)


class StoreMiddleware:
    """Stores marked answers (see the module docstring); first in ``MIDDLEWARE``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        mark = getattr(request, _MARK, None)
        if (
            mark is not None
            and response.status_code == 200
            and response.get("Content-Type", "").startswith("application/json")
            and not response.cookies
            and not response.streaming
        ):
            key, generation = mark
            headers = tuple(
                (name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items()
            )
            read_cache.store(key, read_cache.Entry(generation, 200, headers, response.content))
            asgi = getattr(request, "scope", None)
            if isinstance(asgi, dict) and fast_key(asgi) == key:
                read_cache.remember_request(key, asgi)
        return response


def _token_scope(scope: dict) -> str | None:
    """The remembered scope of the ASGI request's ``Authorization: Token <key>``, when the token
    cache holds the token (the user active); None for any other request (a session cookie, no
    token, a token Django must look up)."""
    token_key = None
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            kind, _, given = value.decode("latin-1").partition(" ")
            if kind.lower() != "token" or not given or " " in given.strip():
                return None
            token_key = given.strip()
        elif name.lower() == b"cookie":
            return None  # Django decides what a request with a session means
    if token_key is None or authentication.cached_entry(token_key) is None:
        return None
    return read_cache.scope_recall(token_key, authentication.now())


def fast_key(scope: dict) -> tuple | None:
    """The read cache's key of an ASGI request, when it may be answered without Django: a GET
    under ``PREFIX`` with ``Authorization: Token <key>`` whose token the token cache holds (the
    user active), of a user whose scope is remembered. Anything else: None, and Django answers."""
    if scope.get("method") != "GET" or not scope.get("path", "").startswith(PREFIX):
        return None
    if not read_cache.active():
        return None
    user_scope_name = _token_scope(scope)
    if user_scope_name is None:
        return None
    return key_of(
        user_scope_name,
        scope.get("scheme", "http"),
        scope["path"],
        scope.get("query_string", b""),
        scope.get("headers", ()),
    )


def writer_scope(scope: dict) -> str | None:
    """For a write under ``PREFIX`` (a submission, a kill, a retry) by a token the fast path
    knows, the writer's scope: whose answers the write recomputes before it is answered."""
    if scope.get("method") in ("GET", "HEAD") or not scope.get("path", "").startswith(PREFIX):
        return None
    if not read_cache.active():
        return None
    return _token_scope(scope)


#: A token whose cache entry expires within this share of ``GANGSCHED_TOKEN_CACHE_SECONDS`` is
#: looked up again in the background when the fast path uses it (``token_renewal_due``).
RENEW_WITHIN = 0.3


def token_renewal_due(scope: dict) -> str | None:
    """The token key of a request the fast path answers, when its cache entry is about to
    expire: renewed ahead (``token_renew``), its user's next read is not sent to Django."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            key = value.decode("latin-1").partition(" ")[2].strip()
            entry = authentication.cached_entry(key)
            ttl = authentication.token_cache_seconds()
            if entry is not None and entry.expires - authentication.now() < RENEW_WITHIN * ttl:
                return key
    return None


def token_renew(key: str) -> None:
    """Renew a token's cache entry and its remembered scope from the database (two queries;
    in a thread of its own). Both are then as fresh as after a request Django answered; the
    scope is remembered first, so the renewed entry never meets a scope that expired."""

    def remember_scope(user, expires: float) -> None:
        scope = read_cache.scope_of(sees_all=sees_all_gangs(user), username=user.get_username())
        read_cache.scope_remember(key, expires, scope)

    authentication.renew(key, before_keeping=remember_scope)


def fast_answer(scope: dict) -> read_cache.Entry | None:
    """The cached answer to an ASGI request (``fast_key``), or None: Django answers."""
    key = fast_key(scope)
    return None if key is None else read_cache.lookup(key)
