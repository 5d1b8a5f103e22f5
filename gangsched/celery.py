"""The Celery app. Its configuration lives in the Django settings (``CELERY_*``, see
``gangsched/settings/celery.py``), so the web process, the worker and beat read one source.

Imported by each module that defines tasks (``scheduler_core/tasks.py``, ``dashboard/tasks.py``,
``scheduler_core/declarations/tasks.py``) before it defines them, and by ``celery -A gangsched``;
not when Django starts (``gangsched/__init__.py``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gangsched.settings")

app = Celery("gangsched")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each installed app's tasks.py, when a worker starts
# The declarations package's own tasks module (the provisional-gang promotion), also for a worker.
app.autodiscover_tasks(["scheduler_core.declarations"])


def _connect_heartbeats() -> None:
    # Imported lazily: scheduler_core.worker.heartbeats reads Django settings.
    from scheduler_core.db import session_names
    from scheduler_core.worker import heartbeats

    heartbeats.connect_signals()
    session_names.connect_signals()


_connect_heartbeats()
