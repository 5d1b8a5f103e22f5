"""Threads of the Celery worker and web processes: the coalescing cycle trigger, worker heartbeats.
Imports Django settings, Celery and Redis; nothing of scheduler_core (tasks.py imports it).
"""
