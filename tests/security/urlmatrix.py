"""The routes the authorization matrix must cover, read from the URL conf and the ASGI router,
never listed by hand: a new endpoint, page, admin model or socket route appears here by itself,
and tests/security/test_matrix.py fails until its table says who may call it.

- HTTP: every pattern ``django.urls.get_resolver()`` serves, through every include. A pattern
  shadowed by an earlier one with the same route (``accounts/login/``: ours before
  django.contrib.auth's) never answers and is left out. Its key is its namespaced name, or its
  route when it has none (the admin's redirects and catch-all).
- Methods: a DRF view's or Django class-based view's handlers; a function view's
  ``require_http_methods`` list (found in the decorator's closure), or every method when it has
  none. The admin's views take GET and POST. HEAD follows GET and OPTIONS is answered by the
  base classes of every view, so neither is a column of its own.
- Websockets: the ``URLRouter`` inside ``gangsched.asgi.application``'s websocket stack.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.regex_helper import normalize
from rest_framework.renderers import TemplateHTMLRenderer

#: The methods a view may serve, in the order the matrix reports them.
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
ADMIN_METHODS = ("GET", "POST")


@dataclass(frozen=True)
class Endpoint:
    key: str  # "api:gang", or the route when the pattern has no name
    route: str  # "api/v1/gangs/<str:namespace>/<str:name>/", for messages
    path_format: str  # "/api/v1/gangs/%(namespace)s/%(name)s/"
    params: tuple[str, ...]
    methods: tuple[str, ...]
    is_api: bool  # a DRF view of data: token authentication, JSON refusals (not an HTML page)
    is_admin: bool

    def path(self, values: dict[str, str]) -> str:
        return self.path_format % {param: values[param] for param in self.params}


def endpoints() -> list[Endpoint]:
    """Every HTTP endpoint Django serves, in URL conf order."""
    found: dict[str, Endpoint] = {}
    for chain, pattern, namespace in _walk(get_resolver().url_patterns, (), None):
        route = "".join(str(p.pattern) for p in (*chain, pattern))
        if route in found:  # shadowed: the first pattern with this route answers
            continue
        name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name
        path_format, params = _path_format((*chain, pattern))
        is_admin = namespace == "admin" or route.startswith("admin/")
        found[route] = Endpoint(
            key=name or route,
            route=route,
            path_format=path_format,
            params=params,
            methods=ADMIN_METHODS if is_admin else view_methods(pattern.callback),
            is_api=_api_view(pattern.callback),
            is_admin=is_admin,
        )
    return list(found.values())


def _walk(patterns, chain: tuple, namespace: str | None):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = namespace
            if pattern.namespace:
                inner = f"{namespace}:{pattern.namespace}" if namespace else pattern.namespace
            yield from _walk(pattern.url_patterns, (*chain, pattern), inner)
        elif isinstance(pattern, URLPattern):
            yield chain, pattern, namespace


def _path_format(chain: tuple) -> tuple[str, tuple[str, ...]]:
    """The chain's regexes joined, as Django's reverse() sees them: ``("/a/%(x)s/", ("x",))``."""
    regex = ""
    for part in chain:
        piece = part.pattern.regex.pattern
        piece = piece.removeprefix("^").removesuffix(r"\Z").removesuffix("$")
        regex += piece
    path_format, params = normalize(regex)[0]
    return "/" + path_format, tuple(params)


def _drf_view(callback):
    cls = getattr(callback, "cls", None)
    return cls if cls is not None and hasattr(cls, "initial") else None


def _api_view(callback) -> bool:
    """A DRF view that answers data (token authentication, JSON refusals); a DRF view that only
    renders an HTML page (the API's Swagger UI and Redoc) is a page, asked with a session."""
    cls = _drf_view(callback)
    return cls is not None and not all(issubclass(r, TemplateHTMLRenderer) for r in cls.renderer_classes)


def view_methods(callback) -> tuple[str, ...]:
    cls = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if cls is not None:  # a handler, and not refused by http_method_names (LogoutView: POST only)
        return tuple(m for m in METHODS if m.lower() in cls.http_method_names and hasattr(cls, m.lower()))
    view = callback
    while view is not None:  # through every decorator that used functools.wraps
        allowed = _closure(view).get("request_method_list")
        if allowed is not None:
            return tuple(m for m in METHODS if m in allowed)
        view = getattr(view, "__wrapped__", None)
    return METHODS


def _closure(function) -> dict:
    try:
        return dict(inspect.getclosurevars(function).nonlocals)
    except TypeError:  # a callable object, not a function
        return {}


@dataclass(frozen=True)
class SocketRoute:
    route: str
    consumer: type


def socket_routes() -> list[SocketRoute]:
    """The websocket routes of the ASGI application, found through its middleware stack."""
    from channels.routing import URLRouter

    from gangsched.asgi import router

    layer = router.application_mapping["websocket"]
    while not isinstance(layer, URLRouter):
        layer = getattr(layer, "application", None) or layer.inner
    return [SocketRoute(str(route.pattern), route.callback.consumer_class) for route in layer.routes]
