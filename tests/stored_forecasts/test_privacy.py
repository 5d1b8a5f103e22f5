"""Who sees what of a forecast (services/forecast_privacy.py, reads/forecasts.py): a submitter
reads positions among their own pending gangs and the engine's explanation with other
submitters' work redacted; operators and viewers read Kueue's positions and the message as is."""

from __future__ import annotations

import pytest

from scheduler_core.engine.decisions import Reason
from scheduler_core.forecast import Forecasts, WaitingFor
from scheduler_core.forecast import GangForecast as Forecast
from scheduler_core.models import GangForecast
from scheduler_core.services.forecast_privacy import GENERIC, OTHERWISE, message_for_owner, own_positions
from scheduler_core.services.forecasts import forecast_rows, forecasts_run, snapshot_read
from tests.stored_forecasts.world import queue_world

OWNERS = {"ml/mine": "alice", "ml/mine-0": "alice", "team-b/head": "bob", "team-b/head-0": "bob"}

# The engine's own wording (engine/actions/allocate.py, preempt.py, topology_explain.py).
BEHIND = (
    "blocked behind team-b/head, which is first in the queue and has capacity reserved "
    "(ahead as less work, though created 120 s later)"
)
EVICTING = (
    "evicting team-b/head (gang, priority 0, 1 member: team-b/head-0) to make room for 2 members; "
    "binds once they are gone"
)
HELD = (
    "needs 2 x {cpu 4} in one rack; no rack has 8 free cpu; other exclusive gangs hold 1 of 3 racks "
    "(r0 by team-b/head)"
)
NOBODYS = "needs 2 x {nvidia.com/gpu 8}; 4 node(s) had untolerated taint {nvidia.com/gpu: present}; zone"


@pytest.mark.parametrize(
    ("reason", "message", "shown"),
    [
        (Reason.BLOCKED_BEHIND.value, BEHIND, GENERIC[Reason.BLOCKED_BEHIND.value]),
        (Reason.PREEMPTING.value, EVICTING, GENERIC[Reason.PREEMPTING.value]),
        (Reason.NO_DOMAIN_FITS.value, HELD, GENERIC[Reason.NO_DOMAIN_FITS.value]),
        (Reason.INSUFFICIENT_RESOURCES.value, "gang ml/unknown-to-us waits", OTHERWISE),
        # Its own work, resources and label keys with a slash are no one's work.
        (
            Reason.BLOCKED_BEHIND.value,
            BEHIND.replace("team-b/head", "ml/mine"),
            BEHIND.replace("team-b/head", "ml/mine"),
        ),
        (
            Reason.INSUFFICIENT_RESOURCES.value,
            NOBODYS + " topology.kubernetes.io/zone",
            NOBODYS + " topology.kubernetes.io/zone",
        ),
    ],
)
def test_a_message_naming_another_submitters_work_is_redacted_for_the_owner(reason, message, shown):
    assert message_for_owner(reason, message, "alice", OWNERS) == shown
    for generic in (*GENERIC.values(), OTHERWISE):  # the replacements name and count nothing
        assert "/" not in generic and not any(ch.isdigit() for ch in generic)


def test_a_gang_without_a_submitter_reads_every_named_key_as_anothers():
    assert message_for_owner("BlockedBehind", BEHIND.replace("team-b/head", "ml/mine"), "", OWNERS) != BEHIND


def test_own_positions_count_only_the_submitters_gangs_ahead():
    own = own_positions(
        [
            ("ml/a", "alice", "q", ("ml", "q"), 0, 0, 0),
            ("ml/b", "bob", "q", ("ml", "q"), 1, 1, 1),
            ("ml/c", "alice", "q", ("ml", "q"), 2, 2, 2),
            ("dev/d", "alice", "q", ("dev", "q"), 3, 0, 3),
            ("ml/e", "alice", "other", ("ml", "other"), 0, 0, 4),
        ]
    )
    assert own == {
        "ml/a": (0, 0, 0),
        "ml/b": (0, 0, 0),
        "ml/c": (1, 1, 1),
        "dev/d": (2, 0, 2),
        "ml/e": (0, 0, 3),
    }


@pytest.mark.django_db
def test_the_stored_row_keeps_both_messages():
    """A forecast whose explanation names bob's gang: stored as is for operators, generic for alice."""
    gangs = queue_world()
    snapshot, facts = snapshot_read(0.0)
    message = BEHIND.replace("team-b/head", "ml/second")  # bob's gang
    first = Forecast(
        gang="ml/first", status="expected", start_p10=10.0, start_p50=20.0, start_p90=30.0, queue="default",
        position_in_queue=0, position_in_local_queue=0, position_in_cluster=0,
        waiting_for=WaitingFor(Reason.BLOCKED_BEHIND.value, message),
    )  # fmt: skip
    (row,) = forecast_rows(Forecasts(made_at=0.0, horizon=1e9, gangs={"ml/first": first}), snapshot, facts)
    assert row.gang_id == gangs["first"].pk
    assert row.waiting_message == message
    assert row.waiting_message_own == GENERIC[Reason.BLOCKED_BEHIND.value]


@pytest.mark.django_db
def test_stored_positions_for_operators_and_for_the_submitter():
    from scheduler_core.reads.forecasts import forecast_view

    gangs = queue_world()
    forecasts_run()
    third = gangs["third"]
    row = GangForecast.objects.get(gang=third)
    operator = forecast_view(third, row, sees_all=True)
    owner = forecast_view(third, row, sees_all=False)
    assert (operator["position_in_queue"], operator["counts"]) == (2, "all")
    assert operator["positions_text"] == "3rd in queue default; 3rd in the cluster"
    assert (owner["position_in_queue"], owner["counts"]) == (1, "own")
    assert owner["positions_text"] == "2nd of your pending gangs in queue default; 2nd of them in the cluster"
