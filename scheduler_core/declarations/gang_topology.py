"""A gang's topology constraint across the objects of one apply, for ``apply.py``.

The constraint may be declared by the gang's object (a Volcano PodGroup's ``networkTopology``, a
PodGroup's KAI annotations) or by its pods (Kueue's pod-set annotations, KAI's on a pod or its
top owner). Two declarations of one gang's constraint must agree: a pod asking for another level
than its gang (or than another pod of it) is refused naming the pod's key. A gang declared
without one takes its pods'; a gang whose object cannot carry one (a scheduler-plugins PodGroup
applied again without annotations) keeps what its pods gave it.

After the apply's topologies are written (``topology_objects.topologies_write``), every
constraint is checked against the topologies then known (``services/topology.constraint_check``)
and Volcano's ``highestTierName`` becomes its tier's level, before the first gang is written.
"""

from __future__ import annotations

from scheduler_core.models import Gang
from scheduler_core.reads.topology_domains import hypernode_label
from scheduler_core.services.topology import constraint_check, known_topologies, tier_of_name

from . import validate as v
from .spec import GangSpec, Plan, PodSpec
from .topology_keys import TopologyAsk, ask_apply, ask_of

_FIELDS = ("topology_required", "topology_preferred", "topology_name")


def _pods_ask(pods: list[PodSpec], first: TopologyAsk | None) -> TopologyAsk | None:
    """The one constraint ``pods`` ask for (after ``first``, the gang's own); disagreeing: refused."""
    for pod in pods:
        ask = pod.gang.topology if pod.gang is not None else None
        if ask is None:
            continue
        if first is None:
            first = ask
        elif not first.same(ask):
            raise v.DeclarationError(
                ask.field, f"pod {pod.key} asks for {ask.shown()} but {first.field} asks for {first.shown()}"
            )
    return first


def topology_adopt(pods_by_gang: dict[str, list[PodSpec]], gangs: dict[str, GangSpec]) -> None:
    """Each planned gang takes the constraint its pods ask for, unless it declares one itself."""
    for key, pods in pods_by_gang.items():
        gang = gangs.get(key)
        if gang is not None:
            ask_apply(gang, _pods_ask(pods, ask_of(gang)))


def topology_adopt_stored(gang: Gang, pods: list[PodSpec]) -> None:
    """Pods joining a gang applied earlier: the same constraint, or its first one."""
    stored = TopologyAsk(
        gang.topology_required, gang.topology_preferred, gang.topology_name, f"gang {gang.key}"
    )
    has = any(getattr(gang, name) for name in _FIELDS)
    ask = _pods_ask(pods, stored if has else None)
    if ask is None or has:
        return
    ask = topology_resolve_one(ask, known_topologies())
    gang.topology_required, gang.topology_preferred, gang.topology_name = (
        ask.required,
        ask.preferred,
        ask.name,
    )
    Gang.objects.filter(pk=gang.pk).update(**{name: getattr(gang, name) for name in _FIELDS})


def topology_keep(spec: GangSpec, stored: Gang | None, keeping: set[str]) -> None:
    """Re-applying the declaration of a gang whose object carries no constraint (``keeping``:
    those formats) keeps the one its pods gave it."""
    if stored is None or spec.source_format not in keeping or ask_of(spec) is not None:
        return
    spec.topology_required, spec.topology_preferred, spec.topology_name = (
        getattr(stored, n) for n in _FIELDS
    )
    spec.topology_exclusive = stored.topology_exclusive
    spec.topology_field = spec.field


def topology_resolve_one(ask: TopologyAsk, known) -> TopologyAsk:
    """``ask`` with Volcano's tier name resolved, checked against the ``known`` topologies."""
    if ask.tier_name:
        ask = TopologyAsk(
            required=hypernode_label(tier_of_name(ask.tier_name, ask.field + ".highestTierName")),
            name=ask.name,
            field=ask.field,
            exclusive=ask.exclusive,
        )
    constraint_check(ask.required, ask.preferred, ask.name, ask.field, known)
    return ask


def topology_resolve(plan: Plan) -> None:
    """Check every planned gang's constraint (and resolve tier names); raises naming the key."""
    asks = [(gang, ask_of(gang)) for gang in plan.gangs.values()]
    asks = [(gang, ask) for gang, ask in asks if ask is not None]
    if not asks:
        return
    known = known_topologies()
    for gang, ask in asks:
        ask_apply(gang, topology_resolve_one(ask, known))
