"""YuniKorn's ``preemption.delay`` queue property: how long a queue's work waits before it
reclaims beyond the queue's guarantee (``scheduler_core/declarations/queues_yunikorn.py``).

YuniKorn reads it on leaf queues with Go's ``time.ParseDuration`` (``yunikorn-core``,
``pkg/scheduler/objects/queue.go``, ``convertDelay``), inherits it from the parent
(``mergeProperties``) and defaults it to 30 s (``pkg/common/configs/configvalidator.go``,
``DefaultPreemptionDelay``). Volcano's queues reclaim at once.
"""

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.snapshot.queues import queues_read

from ..conftest import apply_text
from .helpers import load_text, specs_by_name

pytestmark = pytest.mark.django_db

CONFIG = """
apiVersion: v1
kind: ConfigMap
metadata: {{name: yunikorn-configs, namespace: yunikorn}}
data:
  queues.yaml: |
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: ml
                properties: {{preemption.delay: "{delay}"}}
                queues:
                  - name: nlp
                  - name: vision
                    properties: {{preemption.delay: 1m30s}}
              - name: ops
"""

VOLCANO = """
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q1}
spec: {weight: 1}
"""

FIELD = "data.queues.yaml.partitions[0].queues[0].queues[0].properties.preemption.delay"


def test_preemption_delay_is_read_inherited_and_defaults_to_thirty_seconds():
    specs = specs_by_name(load_text(CONFIG.format(delay="10s")))

    assert specs["root.ml"].reclaim_delay_s == 10.0
    assert specs["root.ml.nlp"].reclaim_delay_s == 10.0  # its parent's
    assert specs["root.ml.vision"].reclaim_delay_s == 90.0  # its own
    assert specs["root.ops"].reclaim_delay_s == 30.0  # YuniKorn's default
    assert specs["root"].reclaim_delay_s == 30.0


@pytest.mark.parametrize(
    ("delay", "reason"),
    [
        ("10", "is not a duration"),
        ("soon", "is not a duration"),
        ("0s", "must be more than 0"),
        ("-5s", "more than 0"),
    ],
)
def test_a_delay_yunikorn_would_not_honour_is_refused(delay, reason):
    """YuniKorn logs such a delay and falls back to 30 s; gangsched says so instead."""
    with pytest.raises(DeclarationError) as error:
        load_text(CONFIG.format(delay=delay))
    assert error.value.field == FIELD
    assert reason in error.value.reason


def test_each_queue_s_delay_reaches_the_engine_and_the_api(as_alice):
    apply_text(CONFIG.format(delay="2m") + "---" + VOLCANO)

    engine = {queue.name: queue.reclaim_delay_s for queue in queues_read()[0]}
    assert engine["root.ml.nlp"] == 120.0 and engine["root.ml.vision"] == 90.0 and engine["q1"] == 0.0

    assert as_alice.get("/api/v1/queues/root.ml.vision/").json()["reclaimDelaySeconds"] == 90.0
    assert as_alice.get("/api/v1/queues/q1/").json()["reclaimDelaySeconds"] == 0.0
