"""The queue a pod's own labels and annotations name, in each format's keys.

| key | format | names |
|---|---|---|
| label ``kai.scheduler/queue`` (``runai/queue`` before KAI v0.6) | KAI-Scheduler | a KAI Queue |
| label ``kueue.x-k8s.io/queue-name`` | Kueue | a LocalQueue of the pod's namespace |
| annotation ``scheduling.volcano.sh/queue-name`` | Volcano | a Volcano Queue |
| ``yunikorn.apache.org/queue`` (label, annotation); label ``queue`` | YuniKorn | ``ml`` is ``root.ml`` |

YuniKorn's plain ``queue`` label is read only on a pod of a YuniKorn application (an
``applicationId`` label or a ``yunikorn.apache.org/`` annotation): on any other pod it is just a
label. Two keys naming different queues are refused naming the second. ``workloads.pod_spec``
gives the queue to the pod (``PodSpec.queue``: a pod scheduled alone is charged to it) and to its
gang reference, which must then agree with the gang's queue (``apply._queues_check``).
"""

from __future__ import annotations

from . import validate as v

KAI_QUEUE, KAI_LEGACY_QUEUE = "kai.scheduler/queue", "runai/queue"
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
YUNIKORN_QUEUE, YUNIKORN_LABEL = "yunikorn.apache.org/queue", "queue"
YUNIKORN_APP = ("applicationId", "yunikorn.apache.org/app-id")
YUNIKORN_ROOT = "root"  # the root of YuniKorn's queue tree
MAX_QUEUE_NAME = 63  # Gang.queue's length


def yunikorn_pod(labels: dict[str, str], annotations: dict[str, str]) -> bool:
    return any(key in labels or key in annotations for key in YUNIKORN_APP) or any(
        key.startswith("yunikorn.apache.org/") for key in annotations
    )


def yunikorn_queue(labels: dict[str, str], annotations: dict[str, str], field: str) -> tuple[str, str] | None:
    """YuniKorn's queue keys in the shim's order (canonical label, label, annotation)."""
    keys = [("labels", labels, YUNIKORN_QUEUE), ("annotations", annotations, YUNIKORN_QUEUE)]
    if yunikorn_pod(labels, annotations):
        keys.insert(1, ("labels", labels, YUNIKORN_LABEL))
    for kind, values, key in keys:
        if key in values:
            where = v.join(field, kind, key)
            path = queue_path(v.text(values[key], where, max_length=MAX_QUEUE_NAME))
            return v.text(path, where, max_length=MAX_QUEUE_NAME), where
    return None


def pod_queue(labels: dict[str, str], annotations: dict[str, str], field: str) -> tuple[str, str] | None:
    """(queue, the path of the key naming it), or None when no key names one."""
    found = []
    for kind, values, key in (
        ("labels", labels, KAI_QUEUE),
        ("labels", labels, KAI_LEGACY_QUEUE),
        ("labels", labels, KUEUE_QUEUE),
        ("annotations", annotations, VOLCANO_QUEUE),
    ):
        if key in values:
            where = v.join(field, kind, key)
            found.append((v.text(values[key], where, max_length=MAX_QUEUE_NAME), where))
    yunikorn = yunikorn_queue(labels, annotations, field)
    if yunikorn is not None:
        found.append(yunikorn)
    for queue, where in found[1:]:
        if queue != found[0][0]:
            raise v.DeclarationError(where, f"names queue {queue!r} but {found[0][1]} names {found[0][0]!r}")
    return found[0] if found else None


def queue_path(name: str) -> str:
    """A pod's queue label as YuniKorn resolves it: ``ml.nlp`` is ``root.ml.nlp``. Here, not in
    ``queues_yunikorn``, so reading a pod never imports the queue writers."""
    name = name.lower()
    return (
        name if name == YUNIKORN_ROOT or name.startswith(YUNIKORN_ROOT + ".") else f"{YUNIKORN_ROOT}.{name}"
    )
