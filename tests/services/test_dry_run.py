"""scheduler_core/db/dry_run.py: the real write path in a transaction always rolled back, and what
does not wait for a commit (the cycle trigger, the deletion notice, log lines) kept quiet."""

from __future__ import annotations

import logging

import pytest
from django.conf import settings
from django.db import transaction

from scheduler_core import events, tasks
from scheduler_core.db.dry_run import DryRunLogFilter, dry_run_active, rolled_back
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.delete import gang_delete
from tests.cast import make_gang

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


def test_the_block_writes_and_reads_then_everything_is_gone(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks, rolled_back():
        gang = make_gang("ml", "train")
        assert dry_run_active()
        assert Member.objects.filter(gang=gang).count() == 2  # readable inside: the answer is read here
    assert callbacks == []  # gang_submit's cycle trigger went with the savepoint
    assert not dry_run_active()
    assert not Gang.objects.exists() and not Member.objects.exists() and not GangEvent.objects.exists()


def test_an_error_goes_on_up_and_rolls_back_the_same():
    with pytest.raises(Boom), rolled_back():
        make_gang("ml", "train")
        raise Boom
    assert not dry_run_active() and not Gang.objects.exists()


def test_inside_another_transaction_only_the_dry_runs_writes_go(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks, transaction.atomic():
        make_gang("ml", "kept")
        with rolled_back():
            make_gang("ml", "dropped")
    assert list(Gang.objects.values_list("name", flat=True)) == ["kept"]
    assert len(callbacks) == 1  # the kept gang's trigger only


def test_no_cycle_is_triggered_during_a_dry_run(monkeypatch):
    requests = []
    monkeypatch.setattr(tasks._waker, "request", lambda: requests.append(1))
    with rolled_back():
        assert tasks.cycle_trigger() is False
    assert requests == []
    assert tasks.cycle_trigger() is True and requests == [1]


def test_no_deletion_notice_is_sent_during_a_dry_run(monkeypatch):
    """A deletion outside any transaction sends its notice at once; in a dry run, never."""
    sent = []
    monkeypatch.setattr(events, "get_channel_layer", lambda: object())
    monkeypatch.setattr(events, "async_to_sync", lambda send: lambda layer, messages: sent.extend(messages))
    gang = make_gang("ml", "train")
    with rolled_back():
        gang_delete(namespace="ml", name="train")
        events.deleted_send([events.deleted_payload(gang)])
    assert sent == [] and Gang.objects.filter(pk=gang.pk).exists()
    events.deleted_send([events.deleted_payload(gang)])
    assert [group for group, _ in sent] == [events.ALL_GANGS]


class Lines(logging.Handler):
    def __init__(self):
        super().__init__()
        self.addFilter(DryRunLogFilter())
        self.lines: list[tuple[str, str, bool]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelname, record.getMessage(), getattr(record, "dry_run", False)))


@pytest.fixture
def lines():
    handler = Lines()
    logger = logging.getLogger("scheduler_core")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield handler.lines
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_dry_runs_info_lines_are_dropped_and_its_warnings_marked(lines):
    warn = logging.getLogger("scheduler_core.services.submit")
    with rolled_back():
        make_gang("ml", "dry")
        warn.warning("something odd about %s", "ml/dry")
    make_gang("ml", "real")
    assert lines == [
        ("WARNING", "dry run: something odd about ml/dry", True),
        ("INFO", "gang ml/real submitted: 2 pods, min_member 2", False),
    ]


def test_the_console_handler_carries_the_filter():
    """Every line the service prints goes through it (a filter on a logger would miss its children)."""
    assert settings.LOGGING["handlers"]["console"]["filters"] == ["dry_run"]
    assert settings.LOGGING["filters"]["dry_run"]["()"] == "scheduler_core.db.dry_run.DryRunLogFilter"
    console = [h for h in logging.getLogger().handlers if type(h) is logging.StreamHandler]
    assert console and all(any(isinstance(f, DryRunLogFilter) for f in h.filters) for h in console)
