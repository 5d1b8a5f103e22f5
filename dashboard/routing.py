"""Websocket routes, mounted by ``gangsched/asgi.py`` behind AllowedHostsOriginValidator and
AuthMiddlewareStack."""

from django.urls import path

from dashboard.consumers import GangEventsConsumer

websocket_urlpatterns: list = [
    path("ws/gangs/", GangEventsConsumer.as_asgi()),
]
