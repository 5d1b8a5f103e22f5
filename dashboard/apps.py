from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The web side: pages, API, websocket consumers, admin. It changes state only through services."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "dashboard"
    verbose_name = "Dashboard"

    def ready(self) -> None:
        from .api.authentication import connect_signals

        connect_signals()  # the API's token cache forgets deleted tokens and changed users
