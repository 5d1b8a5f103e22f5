"""Topology objects: Kueue's and KAI-Scheduler's ``Topology``, Volcano's ``HyperNode``.

Keys as each project defines them:

- Kueue ``kueue.x-k8s.io`` ``Topology`` (``v1alpha1`` until TAS went beta, ``v1beta1``,
  ``v1beta2``; ``apis/kueue/v1beta2/topology_types.go``) and KAI-Scheduler ``kai.scheduler/v1alpha1``
  ``Topology`` (``pkg/apis/kai/v1alpha1/topology_types.go``): ``spec.levels[].nodeLabel`` -> the
  levels, widest first. As both CRDs validate: 1 to 16 levels, each a label key of at most 316
  characters, unique, ``kubernetes.io/hostname`` only as the last level.
- Volcano ``topology.volcano.sh/v1alpha1`` ``HyperNode``
  (``staging/src/volcano.sh/apis/pkg/apis/topology/v1alpha1/hypernode_types.go``): ``spec.tier``,
  ``spec.tierName``, ``spec.members[]`` with ``type`` Node or HyperNode and a ``selector`` of
  exactly one of ``exactMatch.name``, ``regexMatch.pattern``, ``labelMatch`` (Nodes only, as
  Volcano reads it). gangsched numbers tiers from 1 (Volcano's docs and examples do); a tier of 0
  is refused naming ``spec.tier``.

Whatever else a spec holds is refused naming the key (``queue_objects.keys_check``). The checks
that need the whole set (a cycle of HyperNodes, a member of a wrong tier, a name used twice) are
``services/topology.py``'s.
"""

from __future__ import annotations

import re
from typing import Any

from scheduler_core.reads.topology_domains import HYPERNODE_LABEL, label_key_valid
from scheduler_core.specs.topology import HyperNodeSpec, TopologySpec

from . import validate as v
from .documents import Manifest
from .queue_objects import cluster_meta, keys_check, spec_of
from .spec import Loaded
from .topology_objects import HyperNodeObject, TopologyObject

KUEUE_GROUP, KAI_GROUP, VOLCANO_GROUP = "kueue.x-k8s.io", "kai.scheduler", "topology.volcano.sh"
KUEUE_VERSIONS = tuple(f"{KUEUE_GROUP}/{version}" for version in ("v1alpha1", "v1beta1", "v1beta2"))
KAI_VERSION = f"{KAI_GROUP}/v1alpha1"
VOLCANO_VERSION = f"{VOLCANO_GROUP}/v1alpha1"
HOSTNAME = "kubernetes.io/hostname"
MAX_LEVELS = 16
MAX_LABEL_KEY = 316
MAX_TIER = 32  # deeper than any network; keeps the synthetic levels few
#: Level keys under this prefix are gangsched's own (the HyperNode tiers' synthetic labels);
#: other ``topology.gangsched.io/`` keys (the demo fleet's and the replay's block and rack) are
#: ordinary node labels.
RESERVED_PREFIX = HYPERNODE_LABEL.split("{", 1)[0]

_TOPOLOGY_KEYS = {"levels": ""}
_LEVEL_KEYS = {"nodeLabel": ""}
_HYPERNODE_KEYS = {"tier": "", "tierName": "", "members": ""}
_MEMBER_KEYS = {"type": "", "selector": ""}
_SELECTOR_KEYS = {"exactMatch": "", "regexMatch": "", "labelMatch": ""}
_LABEL_SELECTOR_KEYS = {"matchLabels": "", "matchExpressions": ""}
_EXPRESSION_KEYS = {"key": "", "operator": "", "values": ""}
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_key(value: Any, field: str) -> str:
    """A node-label key as the Topology CRDs accept it; errors name ``field``."""
    key = v.text(value, field, max_length=MAX_LABEL_KEY)
    if not label_key_valid(key):
        raise v.DeclarationError(field, f"{v.shown(key)} is not a node-label key (prefix/name)")
    return key


def _load_topology(manifest: Manifest, source: str, kind: str) -> Loaded:
    name, _, _ = cluster_meta(manifest)
    spec, field = spec_of(manifest, _TOPOLOGY_KEYS, optional=False)
    levels_field = v.join(field, "levels")
    items = v.sequence(spec.get("levels"), levels_field)
    if not items:
        raise v.DeclarationError(levels_field, "a topology needs at least one level")
    if len(items) > MAX_LEVELS:
        raise v.DeclarationError(levels_field, f"{len(items)} levels: at most {MAX_LEVELS}")
    levels: list[str] = []
    for index, item in enumerate(items):
        where = v.join(levels_field, index)
        item = v.mapping(item, where, optional=False)
        keys_check(item, where, _LEVEL_KEYS)
        key = label_key(item.get("nodeLabel"), v.join(where, "nodeLabel"))
        if key in levels:
            raise v.DeclarationError(
                v.join(where, "nodeLabel"), f"level {key} is listed twice (levels must be unique)"
            )
        if key.startswith(RESERVED_PREFIX):
            raise v.DeclarationError(
                v.join(where, "nodeLabel"), f"labels under {RESERVED_PREFIX} are gangsched's own"
            )
        levels.append(key)
    if HOSTNAME in levels[:-1]:
        where = v.join(levels_field, levels.index(HOSTNAME), "nodeLabel")
        raise v.DeclarationError(where, f"{HOSTNAME} can only be the lowest (last) level")
    topology = TopologySpec(
        name=name,
        levels=levels,
        source_format=source,
        field=manifest.name_field,
        levels_field=levels_field,
        declaration=manifest.obj,
    )
    obj = TopologyObject(topology, kind)
    return Loaded(object_name=obj.object_name, objects=[obj])


def load_kueue_topology(manifest: Manifest, readers=()) -> Loaded:
    return _load_topology(manifest, "kueue", f"topology.{KUEUE_GROUP}")


def load_kai_topology(manifest: Manifest, readers=()) -> Loaded:
    return _load_topology(manifest, "kai", f"topology.{KAI_GROUP}")


# ---------------------------------------------------------------- Volcano HyperNode


def load_hypernode(manifest: Manifest, readers=()) -> Loaded:
    name, _, _ = cluster_meta(manifest)
    spec, field = spec_of(manifest, _HYPERNODE_KEYS, optional=False)
    tier_field = v.join(field, "tier")
    if spec.get("tier") is None:
        raise v.DeclarationError(tier_field, "a HyperNode needs a tier (1: it holds nodes)")
    tier = v.integer(spec.get("tier"), tier_field, minimum=0, maximum=MAX_TIER)
    if tier == 0:
        raise v.DeclarationError(tier_field, "gangsched numbers tiers from 1 (the tier that holds nodes)")
    tier_name = ""
    if spec.get("tierName") not in (None, ""):
        tier_name = v.text(spec["tierName"], v.join(field, "tierName"))
    members_field = v.join(field, "members")
    members = v.sequence(spec.get("members"), members_field)
    if not members:
        raise v.DeclarationError(members_field, "a HyperNode needs at least one member")
    checked = [_member(member, v.join(members_field, i)) for i, member in enumerate(members)]
    hypernode = HyperNodeSpec(
        name=name,
        tier=tier,
        tier_name=tier_name,
        members=checked,
        field=manifest.name_field,
        members_field=members_field,
        declaration=manifest.obj,
    )
    obj = HyperNodeObject(hypernode)
    return Loaded(object_name=obj.object_name, objects=[obj])


def _member(value: Any, field: str) -> dict[str, Any]:
    member = v.mapping(value, field, optional=False)
    keys_check(member, field, _MEMBER_KEYS)
    kind = v.choice(member.get("type"), v.join(field, "type"), ["Node", "HyperNode"])
    selector_field = v.join(field, "selector")
    selector = v.mapping(member.get("selector"), selector_field, optional=False)
    keys_check(selector, selector_field, _SELECTOR_KEYS)
    given = [key for key in _SELECTOR_KEYS if selector.get(key) is not None]
    if len(given) != 1:
        raise v.DeclarationError(selector_field, "give exactly one of exactMatch, regexMatch or labelMatch")
    how = given[0]
    where = v.join(selector_field, how)
    body = v.mapping(selector[how], where, optional=False)
    if how == "exactMatch":
        keys_check(body, where, {"name": ""})
        return {
            "type": kind,
            "selector": {how: {"name": v.dns_subdomain(body.get("name"), v.join(where, "name"))}},
        }
    if how == "regexMatch":
        keys_check(body, where, {"pattern": ""})
        pattern = v.text(body.get("pattern"), v.join(where, "pattern"), max_length=1024)
        try:
            re.compile(pattern)
        except re.error as error:
            raise v.DeclarationError(v.join(where, "pattern"), f"not a regular expression: {error}") from None
        return {"type": kind, "selector": {how: {"pattern": pattern}}}
    if kind != "Node":
        raise v.DeclarationError(
            where, "labelMatch selects Nodes only (as in Volcano): use exactMatch or regexMatch"
        )
    return {"type": kind, "selector": {how: label_selector(body, where)}}


def label_selector(body: dict, field: str) -> dict[str, Any]:
    """A Kubernetes LabelSelector (matchLabels, matchExpressions), checked."""
    keys_check(body, field, _LABEL_SELECTOR_KEYS)
    labels = v.string_map(body.get("matchLabels"), v.join(field, "matchLabels"))
    expressions = []
    for index, item in enumerate(v.sequence(body.get("matchExpressions"), v.join(field, "matchExpressions"))):
        where = v.join(field, "matchExpressions", index)
        item = v.mapping(item, where, optional=False)
        keys_check(item, where, _EXPRESSION_KEYS)
        operator = v.choice(item.get("operator"), v.join(where, "operator"), list(OPERATORS))
        values = [
            v.text(x, v.join(where, "values", i), max_length=63)
            for i, x in enumerate(v.sequence(item.get("values"), v.join(where, "values")))
        ]
        if operator in ("In", "NotIn") and not values:
            raise v.DeclarationError(v.join(where, "values"), f"{operator} needs at least one value")
        if operator in ("Exists", "DoesNotExist") and values:
            raise v.DeclarationError(v.join(where, "values"), f"{operator} takes no values")
        key = label_key(item.get("key"), v.join(where, "key"))
        expressions.append({"key": key, "operator": operator, "values": values})
    if not labels and not expressions:
        raise v.DeclarationError(field, "an empty labelMatch would select every node")
    return {"matchLabels": labels, "matchExpressions": expressions}
