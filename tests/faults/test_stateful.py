"""The service-layer state machine (tests/faults/stateful.py), bounded for ``make test``.

bench/stateful.py runs the same machine for 10,000 steps; GANGSCHED_STATEFUL_EXAMPLES and
GANGSCHED_STATEFUL_STEPS set the size here.
"""

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from .stateful import ServiceMachine

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("GANGSCHED_STATEFUL_EXAMPLES", "8"))
STEPS = int(os.environ.get("GANGSCHED_STATEFUL_STEPS", "40"))


@pytest.mark.timeout(3600)
def test_any_order_of_submits_cycles_failures_and_operator_actions_keeps_the_invariants():
    run_state_machine_as_test(
        ServiceMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
