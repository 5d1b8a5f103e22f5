"""gangsched: a gang scheduler for Kubernetes with a live dashboard.

The Celery app (``gangsched/celery.py``) is not loaded when Django starts, so that a command
that sends no task (``manage.py get``, ``describe``) does not import Celery: each module that
defines tasks imports it first, so that ``@shared_task`` binds to it in every process that can
send one. ``celery -A gangsched`` finds it as ``gangsched.celery.app``.
"""

__all__ = ("celery_app",)


def __getattr__(name: str):
    if name == "celery_app":
        from .celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
