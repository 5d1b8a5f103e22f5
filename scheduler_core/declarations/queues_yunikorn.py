"""YuniKorn's queue configuration: the ``yunikorn-configs`` ConfigMap's ``queues.yaml``.

The shim reads its configuration from the ConfigMap named ``yunikorn-configs``
(``yunikorn-k8shim``, ``pkg/common/constants/constants.go``); the core parses ``queues.yaml``
into ``SchedulerConfig`` (``yunikorn-core``, ``pkg/common/configs/config.go``: Go's YAML
decoder lowercases field names, hence ``submitacl`` and ``placementrules``). Any other ConfigMap
is refused naming ``metadata.name``.

- ``partitions``: one, named ``default`` (the shim's only partition);
- ``queues`` (a tree from ``root``, which YuniKorn inserts above the top queues when it is not
  declared, and which holds no resources): each queue is a gangsched queue named by its full path,
  ``root.ml.nlp``, the name YuniKorn shows and pods' ``queue`` label gives (a label without the
  ``root.`` prefix is completed, as the shim does); its parent is the enclosing queue;
- ``resources.guaranteed`` -> guarantee; ``resources.max`` -> max. Units as the core parses them
  (``pkg/common/resources/quantity.go``): ``vcore`` is CPU (``10`` is ten cores, ``500m`` half a
  core: the engine's milli-CPU), ``memory`` and every other resource a count in bytes or units,
  with ``k``..``E`` or ``Ki``..``Ei`` suffixes and no fraction;
- ``parent: true`` (a parent queue with no children yet) is kept; ``properties``:
  ``preemption.policy: disabled`` -> not reclaimable; ``preemption.delay`` (a Go duration, such
  as ``30s`` or ``1m30s``, > 0) -> how long the queue's work waits before reclaiming beyond its
  guarantee; not set, the parent's (YuniKorn's properties are inherited, ``mergeProperties``),
  else YuniKorn's default 30 s (``configs.DefaultPreemptionDelay``): every YuniKorn queue has a
  delay. YuniKorn falls back to the default on a delay it cannot parse; gangsched refuses it
  naming the property. ``default`` values of the other properties below are accepted as absent;
- ``submitacl`` / ``adminacl``: ``*`` (everyone) only: who may submit to a queue is set in
  gangsched;
- every queue preempts as YuniKorn does (``PREEMPTION_RULES``): never among its own work
  (YuniKorn's preemption design has no intra-queue preemption), and across queues only up to
  its guarantee (or an ancestor's), after its delay, never when none on its path declares one
  (YUNIKORN-1951), and only from queues that keep theirs.

Refused, naming the key: ``placementrules``, ``limits``, ``nodesortpolicy``,
``usergroupresolver``, ``preemption`` other than enabled, ``maxapplications``, ``childtemplate``,
other ACLs and properties gangsched cannot honour (docs/queue-manifests.md lists them).
"""

from __future__ import annotations

import re
from typing import Any

from scheduler_core.specs.queues import QueueSpec

from . import validate as v
from .documents import Manifest
from .queue_objects import QueueTreeObject, keys_check
from .spec import Loaded
from .yaml_stream import yaml_load

CONFIG_MAP = "yunikorn-configs"
DATA_KEY = "queues.yaml"
ROOT = "root"
SOURCE = "yunikorn"

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_QUANTITY = re.compile(r"([0-9]{1,19})\s*([mkKMGTPE]i?)?")  # Go's ParseInt: int64 digits
_MULTIPLIERS = {"": 1, "m": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_MULTIPLIERS |= {f"{p}i": 1 << (10 * n) for n, p in enumerate("KMGTPE", start=1)}
_INT64_MAX = 2**63 - 1
#: How every YuniKorn queue preempts (``engine.model.Queue``'s docstring): no preemption within
#: a queue, and reclaim only up to the declared guarantees.
PREEMPTION_RULES = {"preempt_within": False, "reclaim_up_to": "guarantee"}
#: YuniKorn's ``configs.DefaultPreemptionDelay``.
DEFAULT_PREEMPTION_DELAY_S = 30.0
PREEMPTION_DELAY = "preemption.delay"
# Go's time.ParseDuration: an optional sign, then one or more decimal numbers each with a unit.
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")
_DURATION = re.compile(f"(?:{_DURATION_PART.pattern})+")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}
_DURATION_UNITS["h"] = 3600.0

PARTITION_KEYS = {
    "name": "",
    "queues": "",
    "preemption": "",
    "placementrules": "gangsched puts a pod in the queue its labels name: no placement rules",
    "limits": "gangsched has no per-user or per-group limits",
    "nodesortpolicy": "gangsched places each gang by its own placement (binpack or spread)",
    "usergroupresolver": "gangsched resolves users itself",
}
QUEUE_KEYS = {
    "name": "",
    "parent": "",
    "resources": "",
    "properties": "",
    "submitacl": "",
    "adminacl": "",
    "queues": "",
    "maxapplications": "gangsched does not cap a queue's number of applications",
    "childtemplate": "gangsched creates no queues dynamically: declare each child queue",
    "limits": "gangsched has no per-user or per-group limits",
}
#: property -> the values gangsched honours (YuniKorn's default first).
PROPERTIES = {
    "application.sort.policy": ("fifo",),
    "application.sort.priority": ("enabled",),
    "preemption.policy": ("default", "disabled"),
    "priority.policy": ("default",),
    "priority.offset": ("0",),
}
READ = (*PROPERTIES, PREEMPTION_DELAY)


def load_config_map(manifest: Manifest, readers=()) -> Loaded:
    meta_field = v.join(manifest.path, "metadata")
    metadata = v.mapping(manifest.obj.get("metadata"), meta_field)
    name = v.dns_subdomain(metadata.get("name"), v.join(meta_field, "name"))
    if name != CONFIG_MAP:
        raise v.DeclarationError(
            v.join(meta_field, "name"),
            f"gangsched reads only the ConfigMap {CONFIG_MAP} (YuniKorn's queues), not {name!r}",
        )
    data_field = v.join(manifest.path, "data")
    data = v.string_map(manifest.obj.get("data"), data_field)
    for key in data:
        if key != DATA_KEY:
            raise v.DeclarationError(
                v.join(data_field, key), f"gangsched reads only {DATA_KEY} of {CONFIG_MAP}"
            )
    if manifest.obj.get("binaryData"):
        raise v.DeclarationError(v.join(manifest.path, "binaryData"), f"give {DATA_KEY} as text in data")
    field = v.join(data_field, DATA_KEY)
    if DATA_KEY not in data:
        raise v.DeclarationError(field, "is required: the queue configuration")
    specs = config_read(data[DATA_KEY], field, manifest.obj)
    tree = QueueTreeObject(specs, f"configmap/{CONFIG_MAP}")
    return Loaded(object_name=tree.object_name, objects=[tree])


def config_read(text: str, field: str, declaration: dict) -> list[QueueSpec]:
    try:
        documents = yaml_load(text)
    except v.DeclarationError as error:
        raise v.DeclarationError(v.join(field, error.field) if error.field else field, error.reason) from None
    except Exception as error:  # yaml.YAMLError: its message has the line
        raise v.DeclarationError(field, f"not valid YAML: {error}") from None
    if len(documents) != 1:
        raise v.DeclarationError(field, "must hold one YAML document")
    config = v.mapping(documents[0], field, optional=False)
    keys_check(config, field, {"partitions": "", "checksum": ""})
    partitions = v.sequence(config.get("partitions"), v.join(field, "partitions"))
    if len(partitions) != 1:
        where = v.join(field, "partitions", 1) if partitions else v.join(field, "partitions")
        raise v.DeclarationError(where, "gangsched schedules one partition: declare only 'default'")
    where = v.join(field, "partitions", 0)
    partition = v.mapping(partitions[0], where, optional=False)
    keys_check(partition, where, PARTITION_KEYS)
    if v.text(partition.get("name"), v.join(where, "name")).lower() != "default":
        raise v.DeclarationError(v.join(where, "name"), "the shim schedules the partition 'default' only")
    _preemption(partition.get("preemption"), v.join(where, "preemption"))
    queues_field = v.join(where, "queues")
    roots = v.sequence(partition.get("queues"), queues_field)
    if not roots:
        raise v.DeclarationError(queues_field, "the queue configuration is not set")
    specs: list[QueueSpec] = []
    top = roots[0] if len(roots) == 1 and isinstance(roots[0], dict) else {}
    if str(top.get("name", "")).lower() == ROOT:
        _queue(top, v.join(queues_field, 0), None, specs, declaration, DEFAULT_PREEMPTION_DELAY_S)
    else:  # as YuniKorn's checkQueuesStructure: the queues go under a root it inserts
        specs.append(
            QueueSpec(
                name=ROOT,
                source_format=SOURCE,
                field=queues_field,
                declaration=declaration,
                reclaim_delay_s=DEFAULT_PREEMPTION_DELAY_S,
                **PREEMPTION_RULES,
            )
        )
        for index, queue in enumerate(roots):
            _queue(queue, v.join(queues_field, index), ROOT, specs, declaration, DEFAULT_PREEMPTION_DELAY_S)
    return specs


def _preemption(value: Any, field: str) -> None:
    preemption = v.mapping(value, field)
    keys_check(preemption, field, {"enabled": "", "quotapreemptionenabled": ""})
    if preemption.get("enabled") not in (None, True):
        raise v.DeclarationError(
            v.join(field, "enabled"), "gangsched always reclaims for queues below their share"
        )
    if preemption.get("quotapreemptionenabled") not in (None, False):
        raise v.DeclarationError(
            v.join(field, "quotapreemptionenabled"), "gangsched does not evict to enforce a lowered max"
        )


def _queue(
    value: Any, field: str, parent: str | None, specs: list[QueueSpec], declaration: dict, delay: float
) -> None:
    """Read one queue and its children; ``delay`` is the parent's preemption delay (inherited)."""
    queue = v.mapping(value, field, optional=False)
    keys_check(queue, field, QUEUE_KEYS)
    short = queue.get("name")
    if not isinstance(short, str) or not _NAME.fullmatch(short):
        raise v.DeclarationError(
            v.join(field, "name"), f"{v.shown(short)}: a queue name is 1-64 letters, digits, '_' or '-'"
        )
    short = short.lower()  # YuniKorn's queue names are case-insensitive
    if (parent is None) != (short == ROOT):
        raise v.DeclarationError(v.join(field, "name"), "root is only the top queue of a partition")
    name = short if parent is None else f"{parent}.{short}"
    if any(spec.name == name for spec in specs):
        raise v.DeclarationError(v.join(field, "name"), f"queue {name} is declared twice")
    resources_field = v.join(field, "resources")
    resources = v.mapping(queue.get("resources"), resources_field)
    keys_check(resources, resources_field, {"guaranteed": "", "max": ""})
    if parent is None and resources:
        raise v.DeclarationError(
            resources_field, "the root queue must not have resources set (YuniKorn: it is the whole cluster)"
        )
    spec = QueueSpec(
        name=name,
        source_format=SOURCE,
        field=field,
        declaration=declaration,
        parent=parent,
        guarantee=_resources(resources.get("guaranteed"), v.join(resources_field, "guaranteed")),
        max=_resources(resources.get("max"), v.join(resources_field, "max")),
        **PREEMPTION_RULES,
    )
    spec.reclaimable, spec.reclaim_delay_s = _properties(
        queue.get("properties"), v.join(field, "properties"), delay
    )
    if queue.get("parent") not in (None, False, True):
        raise v.DeclarationError(v.join(field, "parent"), "must be true or false")
    if queue.get("parent"):
        spec.extra["parent"] = True
    for acl in ("submitacl", "adminacl"):
        if queue.get(acl) not in (None, "*", " *"):
            raise v.DeclarationError(
                v.join(field, acl), "only '*' is read: who may submit to a queue is set in gangsched"
            )
    specs.append(spec)
    for index, child in enumerate(v.sequence(queue.get("queues"), v.join(field, "queues"))):
        _queue(child, v.join(field, "queues", index), name, specs, declaration, spec.reclaim_delay_s)


def _properties(value: Any, field: str, delay: float) -> tuple[bool, float]:
    """Whether the queue is reclaimable and its reclaim delay (its ``preemption.delay``, else
    ``delay``, its parent's); refuses a property gangsched cannot honour."""
    # Go's YAML decoder reads ``priority.offset: 0`` into its map[string]string as "0".
    scalars = {
        key: ("true" if item else "false")
        if isinstance(item, bool)
        else str(item)
        if isinstance(item, int)
        else item
        for key, item in v.mapping(value, field).items()
    }
    properties = v.string_map(scalars, field)
    for key, setting in properties.items():
        where = v.join(field, key)
        if key == PREEMPTION_DELAY:
            delay = go_duration(setting, where)
            continue
        if key not in PROPERTIES:
            raise v.DeclarationError(
                where,
                f"gangsched does not read this property (it reads: {', '.join(READ)})",
            )
        if setting.strip().lower() not in PROPERTIES[key]:
            raise v.DeclarationError(
                where, f"{setting!r} cannot be honoured (gangsched reads: {', '.join(PROPERTIES[key])})"
            )
    return properties.get("preemption.policy", "default").strip().lower() != "disabled", delay


def go_duration(text: str, field: str) -> float:
    """Seconds of a positive Go duration (``time.ParseDuration``: ``30s``, ``1m30s``, ``1.5h``,
    ``500ms``), as YuniKorn's ``convertDelay`` reads ``preemption.delay``."""
    body = text.strip()
    sign = -1.0 if body.startswith("-") else 1.0
    body = body[1:] if body[:1] in ("+", "-") else body
    if body != "0" and not _DURATION.fullmatch(body):
        raise v.DeclarationError(field, f"{text!r} is not a duration (such as '30s', '1m30s' or '500ms')")
    seconds = sign * sum(
        float(number) * _DURATION_UNITS[unit] for number, unit in _DURATION_PART.findall(body)
    )
    if seconds <= 0:
        raise v.DeclarationError(field, f"{text!r}: the delay must be more than 0 (YuniKorn's rule)")
    return seconds


def _resources(value: Any, field: str) -> dict[str, int]:
    result = {}
    for resource, amount in v.mapping(value, field).items():
        where = v.join(field, str(resource))
        if resource == "cpu":
            raise v.DeclarationError(where, "YuniKorn calls CPU vcore")
        if isinstance(amount, bool) or not isinstance(amount, str | int):
            raise v.DeclarationError(
                where, f"must be a quantity such as '10' or '16Gi', not {v.kind_of(amount)}"
            )
        result["cpu" if resource == "vcore" else v.text(resource, where)] = yunikorn_quantity(
            str(amount), where, vcore=resource == "vcore"
        )
    return result


def yunikorn_quantity(text: str, field: str, *, vcore: bool) -> int:
    """YuniKorn's grammar: digits, then a suffix; ``m`` only for vcore, whose unit is milli."""
    match = _QUANTITY.fullmatch(text.strip())
    suffix = (match.group(2) or "") if match else ""
    if match is None or suffix not in _MULTIPLIERS or (suffix == "m" and not vcore):
        raise v.DeclarationError(
            field,
            f"{text!r} is not a YuniKorn quantity "
            f"(digits and a suffix such as k, M, Gi{', m' if vcore else ''})",
        )
    amount = int(match.group(1)) * _MULTIPLIERS[suffix] * (1000 if vcore and suffix != "m" else 1)
    cap = min(_INT64_MAX, v.limit("GANGSCHED_MAX_QUANTITY", v.MAX_QUANTITY))
    if amount > cap:
        raise v.DeclarationError(field, f"{text!r} is too large (at most {cap} canonical units)")
    return amount
