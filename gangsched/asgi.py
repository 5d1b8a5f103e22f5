"""ASGI entry point: plain HTTP goes to Django, websockets to the dashboard's consumers."""

import os

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler with the middleware and the view run as one synchronous call.

    Every view here is synchronous (DRF, the pages), and so is every middleware in effect: under
    ASGI Django runs each dual-mode middleware's ``process_request`` and ``process_response`` in
    a thread hop of its own and the view in another, 17 hops per request with ours. That cost
    more than the gang list itself; here the whole chain is built as under WSGI and entered
    through one ``sync_to_async`` (thread-sensitive, as Django would call the view).
    """

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)


# Initialise Django (the app registry) before importing anything that imports models.
django.setup(set_prefix=False)
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
