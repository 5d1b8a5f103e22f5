"""Dry runs (Kubernetes' ``dryRun=All``, ``kubectl apply --dry-run=server``): the real write path,
run in a transaction that is always rolled back.

Running the same code rather than a copy of its checks is what makes a dry run's answer the real
one: every validation, every tenancy and queue refusal, every database constraint and trigger
runs, and the rows the answer is read from are the ones a real submission would have written.
What leaves the process only at commit goes with the rollback: ``transaction.on_commit``
callbacks registered inside (a cycle's trigger, the read cache's invalidation, a deletion's
notice to the sockets) are dropped, the outbox rows the event publisher would send are never
seen, and PostgreSQL delivers no NOTIFY of a rolled-back transaction. Inside another transaction
(a test's, a command's) the block is a savepoint, rolled back with its callbacks the same way.

What does not wait for a commit asks ``dry_run_active()``: ``cycle_trigger`` and the deletion
notice send nothing, and ``DryRunLogFilter`` (on the console handler, gangsched/settings) drops
the lines a dry run's writes log below WARNING, since ``gang ml/train submitted`` did not happen,
and marks the others. What stays: ids taken from PostgreSQL's sequences (a sequence is not rolled
back, so the ids a dry run shows are never given to anything), and the row locks taken while it
ran (a submission of the same key waits for the dry run's transaction, as for another's).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction

#: kubectl's words after each line of a server-side dry run (``pod/x created (server dry run)``).
SERVER_DRY_RUN = "(server dry run)"

_active: ContextVar[bool] = ContextVar("gangsched_dry_run", default=False)


def dry_run_active() -> bool:
    """True inside ``rolled_back()``, in this thread or task (a context variable: another
    request served meanwhile by the same process is not a dry run)."""
    return _active.get()


@contextmanager
def rolled_back(using: str | None = None) -> Iterator[None]:
    """Run the block in a transaction (a savepoint inside another) that is rolled back when it
    ends, normally or by an exception, which goes on up. Read what the answer needs inside it:
    after it, the rows are gone."""
    token = _active.set(True)
    try:
        with transaction.atomic(using=using):
            yield
            transaction.set_rollback(True, using=using)
    finally:
        _active.reset(token)


class DryRunLogFilter(logging.Filter):
    """On a handler: during a dry run, drop records below WARNING and mark the others
    (``dry_run: true`` in the JSON format, ``dry run:`` before the message). A filter on a
    handler sees every logger's records; one on a logger would miss its children's."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _active.get():
            return True
        if record.levelno < logging.WARNING:
            return False
        if not getattr(record, "dry_run", False):  # once, however many handlers it passes
            record.dry_run = True
            record.msg = f"dry run: {record.msg}"
        return True
