from django.apps import AppConfig


class SchedulerCoreConfig(AppConfig):
    """Gangs, members, nodes and their history; the services that run scheduling cycles.

    The pure scheduling engine lives in ``scheduler_core/engine/`` and never imports Django.
    """

    default_auto_field = "django.db.models.BigAutoField"
    name = "scheduler_core"
    verbose_name = "Scheduler"

    def ready(self) -> None:
        # Nothing heavy here: every manage.py command runs it. (The declarations package's
        # Celery tasks are found by the worker: gangsched/celery.py.)
        from scheduler_core.events import connect_signals

        connect_signals()  # a gang's deletion reaches the open sockets (scheduler_core/events.py)
