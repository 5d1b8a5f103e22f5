"""Koordinator gang annotations (``gang.scheduling.koordinator.sh/*``), on pods or on a PodGroup.

| annotation | gangsched field | default |
|---|---|---|
| ``name`` | gang name (RFC 1123) | - |
| ``min-available`` | min_member | required for a declaration; without it the pod names a PodGroup |
| ``total-number`` | total_number | min-available |
| ``waiting-time`` (Go duration, ``300s``) | wait_seconds | 600 s (Koordinator's global default) |
| ``mode`` (``Strict``/``NonStrict``) | mode | Strict |
| ``groups`` (JSON list of ``"namespace/name"``) | gang group | none |
| ``match-policy`` (alias ``pod-group.scheduling.sigs.k8s.io/match-policy``) | match_policy | once-satisfied |

On a PodGroup the same keys are annotations and win over the PodGroup's own fields.

``match-policy`` says how a gang satisfied once takes new members, such as the replacement of a
deleted bare pod (``isGangValidForPermit`` in Koordinator's coscheduling plugin):
``once-satisfied`` binds them at once, ``waiting-and-running`` once the running members and the
new ones reach min-available, ``only-waiting`` once min-available new ones are placed together.
"""

from __future__ import annotations

import hashlib
import json

from scheduler_core.engine.model import MatchPolicy

from . import validate as v
from .spec import GangRef, GangSpec

PREFIX = "gang.scheduling.koordinator.sh/"
NAME, MIN_AVAILABLE, TOTAL_NUMBER = PREFIX + "name", PREFIX + "min-available", PREFIX + "total-number"
WAITING_TIME, MODE, GROUPS = PREFIX + "waiting-time", PREFIX + "mode", PREFIX + "groups"
MATCH_POLICY = PREFIX + "match-policy"
#: The same key under scheduler-plugins' prefix, which Koordinator reads when the first is absent.
MATCH_POLICY_ALIAS = "pod-group.scheduling.sigs.k8s.io/match-policy"
#: Koordinator's global default gang waiting time (CoschedulingArgs.DefaultTimeout).
DEFAULT_WAIT_SECONDS = 600.0
SOURCE = "koordinator"


def pod_gang(
    namespace: str, labels: dict[str, str], annotations: dict[str, str], field: str
) -> GangRef | None:
    if NAME not in annotations:
        return None
    where = v.join(field, "annotations")
    name = v.dns_subdomain(annotations[NAME], v.join(where, NAME))
    ref = GangRef(namespace=namespace, name=name, source_format=SOURCE, field=where)
    if MIN_AVAILABLE in annotations:
        base = GangSpec(
            namespace=namespace,
            name=name,
            min_member=1,
            source_format=SOURCE,
            declaration={"annotations": {k: val for k, val in annotations.items() if _declares(k)}},
            field=where,
            wait_seconds=DEFAULT_WAIT_SECONDS,
        )
        ref.spec = overlay(base, annotations, where)
    return ref


def _declares(key: str) -> bool:
    return key.startswith(PREFIX) or key == MATCH_POLICY_ALIAS


def overlay(spec: GangSpec, annotations: dict[str, str], field: str) -> GangSpec:
    """Apply the annotations present over ``spec`` (a PodGroup's fields, or defaults)."""

    def at(key: str) -> str:
        return v.join(field, key)

    if MIN_AVAILABLE in annotations:
        spec.min_member = v.member_count(annotations[MIN_AVAILABLE], at(MIN_AVAILABLE), text_ok=True)
    if TOTAL_NUMBER in annotations:
        spec.total_number = v.member_count(annotations[TOTAL_NUMBER], at(TOTAL_NUMBER), text_ok=True)
    elif spec.source_format == SOURCE:
        spec.total_number = spec.min_member
    if spec.total_number is not None and spec.total_number < spec.min_member:
        raise v.DeclarationError(
            at(TOTAL_NUMBER) if TOTAL_NUMBER in annotations else at(MIN_AVAILABLE),
            f"total-number {spec.total_number} is below min-available {spec.min_member}",
        )
    if WAITING_TIME in annotations:
        spec.wait_seconds = v.wait_seconds(annotations[WAITING_TIME], at(WAITING_TIME), duration=True)
    if MODE in annotations:
        spec.mode = v.mode(annotations[MODE], at(MODE))
    if GROUPS in annotations:
        spec.group, spec.group_key = group_members(spec, annotations[GROUPS], at(GROUPS))
    key = next((key for key in (MATCH_POLICY, MATCH_POLICY_ALIAS) if key in annotations), None)
    if key is not None:
        spec.match_policy = v.choice(annotations[key], at(key), [p.value for p in MatchPolicy])
    return spec


def group_members(spec: GangSpec, text: str, field: str) -> tuple[list[str], str]:
    """The group's gang keys (this gang included, as Koordinator adds it) and the group's key:
    the sorted keys joined by commas (hashed when that is too long for a key)."""
    try:
        listed = json.loads(text, parse_constant=lambda name: name)
    except ValueError as error:
        raise v.DeclarationError(field, f'not a JSON list of "namespace/name" strings: {error}') from None
    if not isinstance(listed, list):
        raise v.DeclarationError(field, 'must be a JSON list of "namespace/name" strings')
    keys = []
    for index, item in enumerate(listed):
        namespace, name = v.gang_key(item, f"{field}[{index}]")
        keys.append(f"{namespace}/{name}")
    if spec.key not in keys:
        keys.append(spec.key)
    keys = sorted(set(keys))
    maximum = v.MAX_GROUP_GANGS
    if len(keys) > maximum:
        raise v.DeclarationError(field, f"a gang group has at most {maximum} gangs, not {len(keys)}")
    key = ",".join(keys)
    if len(key) > 512:
        key = "group-" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return keys, key
