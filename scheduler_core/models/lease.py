from django.db import models
from django.utils import timezone


class SchedulerLease(models.Model):
    """Who may schedule right now, and the fencing token (``epoch``) that proves it.

    One row per lease name ("scheduler"). A worker takes the lease when it is free or expired,
    which bumps ``epoch``; every write of a cycle's results checks, in the same transaction and
    under a shared row lock, that the epoch is still its own (``services/lease.py``). A worker
    that stalled past ``expires_at`` and lost the lease therefore cannot write stale decisions.
    A worker that crashed frees the lease at once when its death shows (its PostgreSQL session,
    ``holder_session``, has ended, or ``holder_pid`` no longer runs on ``holder_host``, the
    taker's own machine), else by expiry. A PostgreSQL row rather than an advisory lock: session
    advisory locks do not survive a transaction pooler, and a Redis lock cannot be checked inside
    the database transaction that writes.
    """

    name = models.CharField(max_length=64, unique=True)
    holder = models.CharField(max_length=255, blank=True)
    epoch = models.BigIntegerField(default=0)
    acquired_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(default=timezone.now)
    # Who the holder is, to tell that it died (services/lease.py): its machine (host name and
    # PID namespace), its process id there, and its PostgreSQL backend's pid.
    holder_host = models.CharField(max_length=255, blank=True)
    holder_pid = models.IntegerField(null=True, blank=True)
    holder_session = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} held by {self.holder or 'nobody'} (epoch {self.epoch})"
