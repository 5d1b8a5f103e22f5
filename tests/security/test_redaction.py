"""The one redaction rule (scheduler_core/reads/redaction.py) on the engine's own wording: a text
naming a gang or pod the viewer may not see is replaced whole; details lose what names it and
the figures about it; counts and quantities written as fractions are no one's work."""

from __future__ import annotations

import pytest

from scheduler_core.reads.redaction import (
    EVENT_GENERIC,
    GENERIC,
    OTHERWISE,
    Viewer,
    named_keys,
    redact_details,
    redact_event,
    redact_message,
    shown_by,
)
from tests.cast import make_gang

OWNERS = {"ml/mine": "alice", "ml/mine-0": "alice", "team-b/head": "bob", "team-b/head-0": "bob"}
ALICE = shown_by(OWNERS, "alice")


def test_fractions_quantities_and_resource_names_are_no_ones_work():
    text = "0/16 nodes are available: 4 Insufficient nvidia.com/gpu; cpu 1500m/2, memory 64Gi/128Gi"
    assert named_keys(text) == ["0/16", "1500m/2"]
    assert redact_message("NoFeasibleNodes", text, ALICE) == text
    # ... unless a gang has that key, and it is another's.
    assert redact_message("NoFeasibleNodes", text, shown_by({"0/16": "bob"}, "alice")) == OTHERWISE


BEHIND = "BlockedBehind: blocked behind {}, which is first in the queue"
GROUP = "WaitingForGangGroup: waiting for gang group member ml/gone"


@pytest.mark.parametrize(
    ("kind", "text", "shown"),
    [
        ("explained", BEHIND.format("team-b/head"), f"BlockedBehind: {GENERIC['BlockedBehind']}"),
        ("preempted", "preempted by team-b/head (priority 10)", EVENT_GENERIC["preempted"]),
        ("reserved", "2 members: nominated: evicting team-b/head-0", EVENT_GENERIC["reserved"]),
        ("explained", BEHIND.format("ml/mine"), BEHIND.format("ml/mine")),
        ("explained", GROUP, f"WaitingForGangGroup: {GENERIC['WaitingForGangGroup']}"),
    ],
)
def test_history_texts(kind, text, shown):
    assert redact_event(kind, text, ALICE) == shown


def test_details_lose_what_names_hidden_work_and_the_figures_about_it():
    details = {
        "head": "team-b/head",
        "head_created_later_s": 30.0,
        "victims": ["team-b/head", "ml/mine"],
        "taken": [
            {"kind": "whole", "gang": "team-b/head", "priority": 5, "pods": ["team-b/head-0"]},
            {"kind": "whole", "gang": "ml/mine", "priority": 0, "pods": ["ml/mine-0"]},
        ],
        "exclusive": {"domains": 3, "held": 1, "held_by": [{"domain": "r0", "gang": "team-b/head"}]},
        "shapes": [{"count": 2, "requests": {"cpu": 1000}}],
        "explained_at": "2024-01-01T00:00:00+00:00",
    }
    assert redact_details(details, ALICE) == {
        "victims": ["ml/mine"],
        "taken": [{"kind": "whole", "gang": "ml/mine", "priority": 0, "pods": ["ml/mine-0"]}],
        "exclusive": {"domains": 3, "held_by": []},
        "shapes": [{"count": 2, "requests": {"cpu": 1000}}],
        "explained_at": "2024-01-01T00:00:00+00:00",
    }
    assert redact_details(details, shown_by(OWNERS, "bob"))["head"] == "team-b/head"


@pytest.mark.django_db
def test_a_viewer_looks_up_who_owns_what_is_named():
    make_gang("ml", "mine", submitter="alice", pods=1)
    make_gang("team-b", "head", submitter="bob", pods=1)
    alice = Viewer("alice", sees_all=False).learn("ml/mine-0 and team-b/head-0 and ml/gone")
    keys = ("ml/mine", "ml/mine-0", "team-b/head", "team-b/head-0", "ml/gone")
    assert [alice.shown(key) for key in keys] == [True, True, False, False, None]
    operator = Viewer("olga", sees_all=True)
    assert operator.message("BlockedBehind", "behind team-b/head") == "behind team-b/head"
