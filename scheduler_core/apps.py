from django.apps import AppConfig


class SchedulerCoreConfig(AppConfig):
    """Gangs, members, nodes and their history; the services that run scheduling cycles.

    The pure scheduling engine lives in ``scheduler_core/engine/`` and never imports Django.
    """

    default_auto_field = "django.db.models.BigAutoField"
    name = "scheduler_core"
    verbose_name = "Scheduler"

    def ready(self) -> None:
        # Celery's autodiscovery imports only each app's tasks.py; the declarations package
        # has its own (the provisional-gang promotion), registered here.
        from scheduler_core.declarations import tasks as _declaration_tasks  # noqa: F401
        from scheduler_core.events import connect_signals

        connect_signals()  # a gang's deletion reaches the open sockets (scheduler_core/events.py)
