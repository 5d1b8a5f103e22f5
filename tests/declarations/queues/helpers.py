"""Load queue manifests as ``apply -f`` would, up to (not including) the write."""

from pathlib import Path

from scheduler_core.declarations.documents import documents_expand, documents_parse
from scheduler_core.declarations.queue_objects import FlavorObject, LocalQueueObject, queue_specs
from scheduler_core.declarations.registry import manifest_load

EXAMPLES = Path(__file__).parents[3] / "examples" / "queues"

GIB = 2**30


def load_text(text: str) -> list:
    return [manifest_load(manifest) for manifest in documents_expand(documents_parse(text))]


def load_example(name: str) -> list:
    return load_text((EXAMPLES / name).read_text())


def specs_by_name(loaded: list) -> dict:
    return {spec.name: spec for spec in queue_specs(loaded)}


def others(loaded: list, kind: type) -> list:
    return [obj.spec for item in loaded for obj in item.objects if isinstance(obj, kind)]


def local_queues(loaded: list) -> list:
    return others(loaded, LocalQueueObject)


def flavors(loaded: list) -> list:
    return others(loaded, FlavorObject)
