"""Work arriving wakes the scheduler at once instead of waiting for the next beat."""

import pytest

from scheduler_core.services.submit import gang_submit, pod_submit
from scheduler_core.tasks import cycle_trigger

pytestmark = pytest.mark.django_db


def test_a_submitted_gang_or_pod_triggers_a_cycle_after_commit(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        gang_submit(
            namespace="ml", name="train", min_member=1, pods=[{"name": "train-0", "requests": {"cpu": "1"}}]
        )
    assert cycle_trigger in callbacks
    with django_capture_on_commit_callbacks() as callbacks:
        pod_submit(namespace="ml", name="alone", requests={"cpu": "1"})
    assert cycle_trigger in callbacks
