"""Celery settings, read by ``gangsched/celery.py`` through the ``CELERY_`` namespace."""

import os

from .base import REDIS_URL

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# The queue tasks go to and workers read. Tests give each run its own, so a test's worker never
# takes another run's tasks from the shared Redis database.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("GANGSCHED_CELERY_QUEUE", "celery")

# A task is acknowledged after it ran, not when a worker took it: a worker that dies mid-task
# leaves the message to be redelivered instead of losing it. Tasks must therefore be idempotent.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# One message at a time per process, so a long task does not sit on others' prefetched work.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis redelivers an unacknowledged message after visibility_timeout; the hard time limit stays
# below it so a running task is killed before a second worker could receive the same message.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_EXPIRES = 3600
