"""The scheduler lease: one cycle at a time across all workers, with a fencing token.

``lease_acquire`` takes the lease when it is free, expired, or its holder is dead, and bumps its
epoch; ``fenced`` opens a transaction that first checks, under a key-share row lock, that the
epoch is still ours and unexpired. A taker locks the row ``FOR UPDATE``, which waits for that
lock, so a write that passed the check commits before anyone else can hold the lease, and a
holder that lost the lease (it stalled past its expiry, or was taken for dead) writes nothing.
That guarantee does not depend on why the lease changed hands.

**A dead holder.** A worker killed with SIGKILL cannot release the lease. Waiting for its TTL
stalled scheduling for up to a whole TTL, so the taker also checks whether the holder is alive,
from what the holder recorded when it took the lease:

- its PostgreSQL session (``pg_backend_pid()``): when the process dies the server sees its
  connection close and the backend exits, so ``pg_stat_activity`` no longer lists it. This works
  across machines, and a live holder whose connection was lost cannot write its results anyway;
- its process id and machine (host name and PID namespace, so that containers sharing a host
  name are not confused): a taker on the same machine sees the process gone even while the dead
  holder's backend still runs a statement (it notices the closed connection only at its end).

Either sign is enough. The checks can err only towards "alive": a recycled pid or a server
connection shared through a transaction pooler keeps a dead holder's lease until its TTL, as
before. Erring towards "dead" (a pooler closing a server connection) costs the live holder its
cycle, never a stale write: the epoch fences it.

A PostgreSQL advisory lock held on the holder's session would be released by the server as
well, but it belongs to the connection, not the transaction: a pooled connection given back
with it keeps the lock for whoever takes the connection next, a transaction pooler cannot keep
it at all, and its holder still needs the epoch to fence writes made after a takeover. The row
keeps one mechanism (the epoch under a row lock) and adds only a liveness check to taking it.

**Renewal.** ``lease_held`` takes the lease for a block of work and renews it from a thread of
its own every third of the TTL while the block runs, so the TTL can be a few seconds (the
default is 5) and a long cycle never loses its lease just by being long; a holder whose process
stops stops renewing, and the lease expires one TTL later at the latest. The renewal is an
UPDATE of non-key columns, which takes a lock that does not conflict with the fenced
transactions' key-share lock: the holder's own long write (a bind of many pods) never blocks
its renewal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from scheduler_core.models import SchedulerLease

logger = logging.getLogger(__name__)

SCHEDULER = "scheduler"
#: Renewals per TTL while ``lease_held`` runs: one missed renewal still leaves two.
RENEWALS_PER_TTL = 3

_TABLE = SchedulerLease._meta.db_table


class LeaseLost(Exception):
    """Our epoch is no longer the lease's: another worker holds it, or it expired."""


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str
    epoch: int


@dataclass(frozen=True)
class _Row:
    holder: str
    expires_at: datetime
    host: str
    pid: int | None
    session_alive: bool


def default_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@cache
def this_machine() -> str:
    """The host name and PID namespace of this process: pids compare only within one of these.

    Empty where the namespace cannot be read (not Linux): no holder is then judged by its pid.
    """
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return f"{socket.gethostname()}/{namespace}"


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs on this machine (a zombie, killed and not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def lease_acquire(*, holder: str, ttl_s: float, name: str = SCHEDULER) -> Lease | None:
    """Take the lease if nobody holds it, the holder's time ran out or the holder is dead; None
    when busy."""
    _ensure_row(name)
    if _holder_state(_read(name), timezone.now()) == "busy":  # no lock: a busy lease costs no wait
        return None
    with transaction.atomic():
        row = _read(name, lock=True)  # waits for fenced transactions of the holder to end
        state = _holder_state(row, timezone.now())
        if state == "busy":
            return None
        now = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {_TABLE} SET holder = %s, epoch = epoch + 1, acquired_at = %s, expires_at = %s,"
                " holder_host = %s, holder_pid = %s, holder_session = pg_backend_pid()"
                " WHERE name = %s RETURNING epoch",
                [holder, now, now + timedelta(seconds=ttl_s), this_machine(), os.getpid(), name],
            )
            (epoch,) = cursor.fetchone()
    if state != "free":
        logger.warning("scheduler lease taken from %s (%s) by %s, epoch %d", row.holder, state, holder, epoch)
    return Lease(name, holder, epoch)


def lease_renew(lease: Lease, *, ttl_s: float, lock_timeout_s: float | None = None) -> None:
    """Push our lease's expiry ``ttl_s`` from now; LeaseLost if it is no longer ours.

    ``lock_timeout_s`` bounds the wait for the row (a taker deciding whether we are alive).
    """
    with transaction.atomic(), connection.cursor() as cursor:
        if lock_timeout_s is not None:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{int(lock_timeout_s * 1000)}ms"])
        cursor.execute(
            f"UPDATE {_TABLE} SET expires_at = %s WHERE name = %s AND epoch = %s AND holder = %s",
            [timezone.now() + timedelta(seconds=ttl_s), lease.name, lease.epoch, lease.holder],
        )
        renewed = cursor.rowcount
    if not renewed:
        raise LeaseLost(f"lease {lease.name} epoch {lease.epoch} was taken over")


def lease_release(lease: Lease) -> None:
    """Give the lease back early; a no-op if it was already taken over."""
    SchedulerLease.objects.filter(name=lease.name, epoch=lease.epoch, holder=lease.holder).update(
        holder="", expires_at=timezone.now()
    )


@contextlib.contextmanager
def lease_held(*, holder: str, ttl_s: float, name: str = SCHEDULER):
    """Hold the lease for the block, renewed while it runs, and give it back after; yields the
    Lease, or None when another worker holds it."""
    lease = lease_acquire(holder=holder, ttl_s=ttl_s, name=name)
    if lease is None:
        yield None
        return
    renewer = _Renewer(lease, ttl_s)
    renewer.start()
    try:
        yield lease
    finally:
        renewer.stop()
        lease_release(lease)


class _Renewer(threading.Thread):
    """Renews a held lease every ``ttl_s / RENEWALS_PER_TTL`` on a database connection of its
    own (Django's connections are per thread), opened only once the first renewal is due: most
    cycles end before, and cost no connection."""

    def __init__(self, lease: Lease, ttl_s: float) -> None:
        super().__init__(name=f"lease-renewer-{lease.epoch}", daemon=True)
        self.lease = lease
        self.ttl_s = ttl_s
        self.period_s = ttl_s / RENEWALS_PER_TTL
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.period_s):
                try:
                    lease_renew(self.lease, ttl_s=self.ttl_s, lock_timeout_s=self.period_s)
                except LeaseLost as lost:
                    if not self.stopped.is_set():
                        logger.warning("%s: the cycle's writes will be refused", lost)
                    return
                except DatabaseError as error:
                    logger.warning(
                        "renewing lease %s epoch %d failed: %s", self.lease.name, self.lease.epoch, error
                    )
                    connection.close()  # reconnect at the next renewal
        finally:
            connection.close()

    def stop(self) -> None:
        """Stop renewing; returns once a renewal under way has ended (it waits at most one
        period for the row), so the release after it is the last word."""
        self.stopped.set()
        self.join()


def lease_check(lease: Lease) -> None:
    """Inside a transaction: hold the lease row (key share) and verify it is still ours."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT epoch, holder, expires_at FROM {_TABLE} WHERE name = %s FOR KEY SHARE",
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


def _read(name: str, *, lock: bool = False) -> _Row:
    """The lease row and whether its holder's PostgreSQL session is still there; ``lock``: FOR
    UPDATE, which waits for every fenced transaction (key share) to end."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT holder, expires_at, holder_host, holder_pid, holder_session IS NULL"
            " OR EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.holder_session)"
            f" FROM {_TABLE} l WHERE name = %s" + (" FOR UPDATE OF l" if lock else ""),
            [name],
        )
        return _Row(*cursor.fetchone())


def _holder_state(row: _Row, now: datetime) -> str:
    """ "free", "expired", "session ended", "process gone" (all takeable) or "busy"."""
    if not row.holder:
        return "free"
    if row.expires_at <= now:
        return "expired"
    if not row.session_alive:
        return "session ended"
    if row.pid is not None and row.host and row.host == this_machine() and not process_alive(row.pid):
        return "process gone"
    return "busy"


def _ensure_row(name: str) -> None:
    if SchedulerLease.objects.filter(name=name).exists():
        return
    with contextlib.suppress(IntegrityError), transaction.atomic():
        SchedulerLease.objects.create(name=name, expires_at=timezone.now())
