"""A gang's topology constraint, from each format's own keys, unmodified.

| format | key | becomes |
|---|---|---|
| Kueue (pod, pod template) | ``kueue.x-k8s.io/podset-required-topology: L`` | required L |
| Kueue | ``kueue.x-k8s.io/podset-preferred-topology: L`` | preferred L |
| Kueue | ``kueue.x-k8s.io/podset-unconstrained-topology: true`` | no constraint |
| KAI-Scheduler (pod, PodGroup, template) | ``kai.scheduler/topology-required-placement: L`` | required L |
| KAI-Scheduler | ``kai.scheduler/topology-preferred-placement: L`` | preferred L |
| KAI-Scheduler | ``kai.scheduler/topology: T`` | the Topology T the levels belong to |
| Volcano ``spec.networkTopology`` | ``mode: hard``, ``highestTierAllowed: N`` | required tier N |
| Volcano | ``mode: hard``, ``highestTierName: X`` | required: the tier of ``tierName`` X |
| Volcano | ``mode: soft`` | preferred tier 1: as close as it fits, widening tier by tier |

(Tier N is the level ``hypernode_label(N)``, ``topology_domains.py``.)

As Kueue validates a pod set (``pkg/controller/jobframework/tas_validation.go``): at most one of
its three annotations, the unconstrained one a Go boolean. As Volcano reads a job
(``pkg/scheduler/framework/session.go``, ``convertSoftToHardTopology``): soft mode places as
close as it can across the whole cluster, so ``highestTierAllowed`` means nothing there and is
kept in the declaration only; hard mode without a tier constrains nothing in Volcano and is
refused here (say which tier). Refused, naming the key: Kueue's slice annotations
(``podset-slice-required-topology``, ``podset-slice-size``,
``podset-slice-required-topology-constraints``) and ``podset-group-name``, KAI's segment
annotations (``segment-size``, ``segment-topology-*-placement``) and Volcano's per-partition
``networkTopology`` (``tasks[].partitionPolicy``, ``subGroupPolicy``): gangsched keeps a whole
gang in one domain and splits none. Whether a level exists is checked when the apply writes
(``services/topology.constraint_check``), against stored topologies and those of the same apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scheduler_core.reads.topology_domains import hypernode_label

from . import validate as v
from .queue_objects import keys_check
from .topologies import MAX_TIER, label_key

KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
KAI_TOPOLOGY = "kai.scheduler/topology"
KAI_REQUIRED = "kai.scheduler/topology-required-placement"
KAI_PREFERRED = "kai.scheduler/topology-preferred-placement"
_SLICES = "gangsched keeps a whole gang in one domain: it does not split a gang into slices"
REFUSED = {
    "kueue.x-k8s.io/podset-slice-required-topology": _SLICES,
    "kueue.x-k8s.io/podset-slice-size": _SLICES,
    "kueue.x-k8s.io/podset-slice-required-topology-constraints": _SLICES,
    "kueue.x-k8s.io/podset-group-name": "gangsched places each gang by itself: PodSet groups are not read",
    "kai.scheduler/segment-size": _SLICES,
    "kai.scheduler/segment-topology-required-placement": _SLICES,
    "kai.scheduler/segment-topology-preferred-placement": _SLICES,
}
#: Go's strconv.ParseBool, as Kueue reads the unconstrained annotation.
_BOOLS = {"1", "t", "T", "true", "TRUE", "True", "0", "f", "F", "false", "FALSE", "False"}
_NETWORK_KEYS = {"mode": "", "highestTierAllowed": "", "highestTierName": ""}


@dataclass
class TopologyAsk:
    """What one object's keys ask of its gang's placement; ``field`` names the keys."""

    required: str = ""
    preferred: str = ""
    name: str = ""
    field: str = ""
    tier_name: str = ""  # Volcano's highestTierName, resolved to a tier when the apply writes
    # JobSet's and LeaderWorkerSet's exclusive-topology: alone in the required domain among
    # exclusive gangs. Only a gang's own object asks it, so ``same`` leaves it out: a pod asking
    # for the same level as its exclusive gang agrees with it.
    exclusive: bool = False

    def same(self, other: TopologyAsk) -> bool:
        return (self.required, self.preferred, self.name, self.tier_name) == (
            other.required,
            other.preferred,
            other.name,
            other.tier_name,
        )

    def shown(self) -> str:
        parts = [f"required {self.required or self.tier_name}" if self.required or self.tier_name else ""]
        parts[0] += " (exclusive)" if self.exclusive and parts[0] else ""
        parts += [
            f"preferred {self.preferred}" if self.preferred else "",
            f"topology {self.name}" if self.name else "",
        ]
        return ", ".join(filter(None, parts)) or "no constraint"


def annotations_ask(annotations: dict[str, str], field: str) -> TopologyAsk | None:
    """Kueue's and KAI's annotations (``field``: the annotations' path); None: none given."""
    for key, why in REFUSED.items():
        if key in annotations:
            raise v.DeclarationError(v.join(field, key), why)
    kueue = [key for key in (KUEUE_REQUIRED, KUEUE_PREFERRED, KUEUE_UNCONSTRAINED) if key in annotations]
    kai = [key for key in (KAI_REQUIRED, KAI_PREFERRED, KAI_TOPOLOGY) if key in annotations]
    if not kueue and not kai:
        return None
    if len(kueue) > 1:
        raise v.DeclarationError(
            v.join(field, kueue[1]),
            f"give at most one of {KUEUE_REQUIRED}, {KUEUE_PREFERRED}, {KUEUE_UNCONSTRAINED}",
        )
    ask = TopologyAsk(field=v.join(field, (kueue or kai)[0]))
    if annotations.get(KUEUE_UNCONSTRAINED, "true") not in _BOOLS:
        raise v.DeclarationError(
            v.join(field, KUEUE_UNCONSTRAINED), "must be a boolean value (true or false)"
        )
    for key, attr in ((KUEUE_REQUIRED, "required"), (KUEUE_PREFERRED, "preferred")):
        if key in annotations:
            setattr(ask, attr, label_key(annotations[key], v.join(field, key)))
    for key, attr in ((KAI_REQUIRED, "required"), (KAI_PREFERRED, "preferred")):
        if key in annotations:
            level = label_key(annotations[key], v.join(field, key))
            if getattr(ask, attr) and getattr(ask, attr) != level:
                raise v.DeclarationError(
                    v.join(field, key),
                    f"asks for {level} but a Kueue annotation asks for {getattr(ask, attr)}",
                )
            setattr(ask, attr, level)
    if KAI_TOPOLOGY in annotations:
        ask.name = v.dns_subdomain(annotations[KAI_TOPOLOGY], v.join(field, KAI_TOPOLOGY))
        if not ask.required and not ask.preferred:
            raise v.DeclarationError(
                v.join(field, KAI_TOPOLOGY),
                f"names a topology but no level: add {KAI_REQUIRED} or {KAI_PREFERRED}",
            )
    return ask


def network_topology_ask(value: Any, field: str) -> TopologyAsk | None:
    """Volcano's ``spec.networkTopology`` of a PodGroup or a vcjob (``field``: its path)."""
    if value is None:
        return None
    spec = v.mapping(value, field, optional=False)
    keys_check(spec, field, _NETWORK_KEYS)
    mode = v.choice(spec.get("mode", "hard"), v.join(field, "mode"), ["hard", "soft"])
    tier, tier_name = spec.get("highestTierAllowed"), spec.get("highestTierName")
    if tier is not None and tier_name not in (None, ""):
        raise v.DeclarationError(
            v.join(field, "highestTierName"), "highestTierAllowed and highestTierName cannot both be set"
        )
    if tier is not None:
        tier = v.integer(tier, v.join(field, "highestTierAllowed"), minimum=0, maximum=MAX_TIER)
    if mode == "soft":
        return TopologyAsk(preferred=hypernode_label(1), field=field)
    if tier_name not in (None, ""):
        return TopologyAsk(tier_name=v.text(tier_name, v.join(field, "highestTierName")), field=field)
    if tier is None:
        raise v.DeclarationError(
            v.join(field, "highestTierAllowed"), "hard mode needs highestTierAllowed (or highestTierName)"
        )
    if tier == 0:
        raise v.DeclarationError(
            v.join(field, "highestTierAllowed"), "gangsched numbers tiers from 1 (the tier that holds nodes)"
        )
    return TopologyAsk(required=hypernode_label(tier), field=v.join(field, "highestTierAllowed"))


def partition_check(value: Any, field: str) -> None:
    """Volcano's per-partition (sub-group) networkTopology: refused, naming it."""
    if isinstance(value, dict) and value.get("networkTopology") is not None:
        raise v.DeclarationError(v.join(field, "networkTopology"), _SLICES)


def ask_apply(gang, ask: TopologyAsk | None) -> None:
    """Put ``ask`` on a GangSpec (its three fields and where they were declared)."""
    if ask is None:
        return
    gang.topology_required, gang.topology_preferred, gang.topology_name = (
        ask.required,
        ask.preferred,
        ask.name,
    )
    gang.topology_field, gang.topology_tier_name = ask.field, ask.tier_name
    gang.topology_exclusive = ask.exclusive


def ask_of(gang) -> TopologyAsk | None:
    """The constraint a GangSpec carries, None when it has none."""
    ask = TopologyAsk(
        gang.topology_required,
        gang.topology_preferred,
        gang.topology_name,
        gang.topology_field,
        gang.topology_tier_name,
        gang.topology_exclusive,
    )
    return ask if (ask.required or ask.preferred or ask.name or ask.tier_name) else None
