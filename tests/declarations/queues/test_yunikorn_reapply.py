"""Re-applying ``yunikorn-configs``: the ConfigMap declares the whole tree, so a queue it no
longer lists goes, as in YuniKorn, where a queue removed from ``queues.yaml`` is drained: deleted
once nothing needs it, closed (nothing new starts) while work still runs in it."""

import pytest

from scheduler_core.declarations import documents_parse
from scheduler_core.declarations.apply import manifests_apply
from scheduler_core.models import Gang, Queue

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
{queues}
"""
BOTH = """              - name: ml
                queues:
                  - name: nlp
                  - name: vision"""
ONLY_OPS = """              - name: ops"""


def apply(queues: str) -> list[str]:
    return manifests_apply(documents_parse(CONFIG.format(queues=queues))).lines


def state() -> dict[str, bool]:
    return dict(Queue.objects.values_list("name", "open"))


def test_a_queue_dropped_from_the_config_is_deleted_or_drained():
    apply(BOTH)
    assert state() == {"root": True, "root.ml": True, "root.ml.nlp": True, "root.ml.vision": True}
    Gang.objects.create(namespace="ns", name="g", min_member=1, queue="root.ml.vision")  # active work

    lines = apply(ONLY_OPS)

    assert lines == ["configmap/yunikorn-configs configured"]
    # nlp had nothing: deleted; vision holds a gang: closed; ml keeps a child: closed too.
    assert state() == {"root": True, "root.ops": True, "root.ml": False, "root.ml.vision": False}

    Gang.objects.filter(name="g").delete()  # the work is gone
    apply(ONLY_OPS)
    assert state() == {"root": True, "root.ops": True}


def test_re_applying_the_same_config_changes_nothing():
    apply(BOTH)
    assert apply(BOTH) == ["configmap/yunikorn-configs unchanged"]
    assert len(state()) == 4
