"""Websocket routes, mounted by ``gangsched/asgi.py`` behind AuthMiddlewareStack."""

websocket_urlpatterns: list = []
