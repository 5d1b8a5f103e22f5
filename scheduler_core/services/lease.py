"""The scheduler lease: one cycle at a time across all workers, with a fencing token.

``lease_acquire`` takes the lease when it is free or expired and bumps its epoch; ``fenced``
opens a transaction that first checks, under a shared row lock, that the epoch is still ours and
unexpired. A taker's UPDATE waits for that lock, so a write that passed the check commits before
anyone else can hold the lease, and a holder that stalled past its expiry writes nothing.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from scheduler_core.models import SchedulerLease

SCHEDULER = "scheduler"


class LeaseLost(Exception):
    """Our epoch is no longer the lease's: another worker holds it, or it expired."""


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str
    epoch: int


def default_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def lease_acquire(*, holder: str, ttl_s: float, name: str = SCHEDULER) -> Lease | None:
    """Take the lease if nobody holds it (or the holder's time ran out); None when busy."""
    _ensure_row(name)
    now = timezone.now()
    with transaction.atomic():
        taken = (
            SchedulerLease.objects.filter(name=name)
            .filter(Q(holder="") | Q(expires_at__lte=now))
            .update(
                holder=holder,
                epoch=F("epoch") + 1,
                acquired_at=now,
                expires_at=now + timedelta(seconds=ttl_s),
            )
        )
        if not taken:
            return None
        epoch = SchedulerLease.objects.values_list("epoch", flat=True).get(name=name)
    return Lease(name, holder, epoch)


def lease_renew(lease: Lease, *, ttl_s: float) -> None:
    renewed = SchedulerLease.objects.filter(name=lease.name, epoch=lease.epoch, holder=lease.holder).update(
        expires_at=timezone.now() + timedelta(seconds=ttl_s)
    )
    if not renewed:
        raise LeaseLost(f"lease {lease.name} epoch {lease.epoch} was taken over")


def lease_release(lease: Lease) -> None:
    """Give the lease back early; a no-op if it was already taken over."""
    SchedulerLease.objects.filter(name=lease.name, epoch=lease.epoch, holder=lease.holder).update(
        holder="", expires_at=timezone.now()
    )


def lease_check(lease: Lease) -> None:
    """Inside a transaction: hold the lease row shared and verify it is still ours."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT epoch, holder, expires_at FROM {SchedulerLease._meta.db_table} "
            "WHERE name = %s FOR SHARE",
            [lease.name],
        )
        row = cursor.fetchone()
    if row is None:
        raise LeaseLost(f"lease {lease.name} does not exist")
    epoch, holder, expires_at = row
    if epoch != lease.epoch or holder != lease.holder:
        raise LeaseLost(
            f"stale fencing token: epoch {lease.epoch}, the lease is at {epoch} ({holder or 'free'})"
        )
    if expires_at <= timezone.now():
        raise LeaseLost(f"lease {lease.name} epoch {lease.epoch} expired at {expires_at.isoformat()}")


@contextlib.contextmanager
def fenced(lease: Lease):
    """A transaction whose writes commit only if ``lease`` is still held (else LeaseLost)."""
    with transaction.atomic():
        lease_check(lease)
        yield


def lease_status(name: str = SCHEDULER) -> SchedulerLease | None:
    return SchedulerLease.objects.filter(name=name).first()


def _ensure_row(name: str) -> None:
    if SchedulerLease.objects.filter(name=name).exists():
        return
    with contextlib.suppress(IntegrityError), transaction.atomic():
        SchedulerLease.objects.create(name=name, expires_at=timezone.now())
