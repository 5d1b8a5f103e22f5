"""Properties of topology-aware placement on random small clusters (hypothesis).

1. A gang with a required level is never split: once a cycle has run, its members on nodes
   (bound or holding a reservation) are all in one domain of that level, whenever they were
   before it (members placed before topology existed may already be split).
2. A gang with a preferred level is never spread wider than needed: when it was placed whole in
   a cycle, no narrower domain (down to its preferred level) had room for it in that cycle.
   Checked on what was free after the cycle plus the gang's own binds, which is never more than
   what was free when it was placed, in cycles without evictions and without a backfilling
   limit (head-of-line "none"), for gangs of one shape.
3. Two gangs exclusive at one level never come to share a domain of it: after a cycle, a domain
   holding placed members (bound and not leaving, or reserved) of several such gangs held them
   all before it (drawn so).
4. Every earlier property of the engine (``tests/engine/test_properties.py``) still holds with
   constraints on the gangs and labels on the nodes.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine import HeadOfLine
from scheduler_core.engine.filters import NodeFilter, constraint_key

from .. import test_properties as engine_properties
from ..cycles import fell_back, trajectory
from ..strategies import SETTINGS, Scenario, configs
from .tstrategies import TOPOLOGY, level_path, preferred_scenarios, topology_scenarios

LEVELS = TOPOLOGY.levels[:2]  # block, rack: the hostname level is never constrained here


def _placed(snapshot, gang_key: str, nodes: dict) -> list[str]:
    """Nodes of the gang's members that hold room: bound (not leaving) or reserved."""
    out = []
    for pod in snapshot.pods:
        if pod.gang != gang_key or pod.terminating:
            continue
        where = pod.node if pod.node is not None else pod.reserved_node
        if where is not None and where in nodes:
            out.append(where)
    return out


def _spans_one(where: list[str], nodes: dict, level: str) -> bool:
    paths = {level_path(nodes[name].labels, level) for name in where}
    return len(paths) <= 1 and None not in paths


def _cycles_with_topology(scenario: Scenario):
    """Three cycles of the scenario (before, after, now, nodes by name); none with topology off."""
    if not scenario.config.topology:
        return
    for before, _result, after, now in trajectory(scenario, cycles=3):
        yield before, after, now, {node.name: node for node in before.nodes}


@SETTINGS
@given(topology_scenarios())
def test_a_required_gang_is_never_split_across_domains(scenario: Scenario) -> None:
    for before, after, now, nodes in _cycles_with_topology(scenario):
        for gang in before.gangs:
            level = gang.topology.required if gang.topology is not None else None
            if level not in LEVELS:
                continue
            if not _spans_one(_placed(before, gang.key, nodes), nodes, level):
                continue  # split before the cycle (drawn so): placement keeps to where it is
            where = _placed(after, gang.key, nodes)
            assert _spans_one(where, nodes, level), (
                f"{gang.key} (required {level}) spans {sorted(where)} after the cycle at now={now}"
            )


def _exclusive_holders(snapshot, nodes: dict) -> dict[tuple, set[str]]:
    """(level, domain) -> the gangs exclusive at that level with members placed in it."""
    exclusive = {
        gang.key: gang.topology.required
        for gang in snapshot.gangs
        if gang.topology is not None and gang.topology.exclusive
    }
    held: dict[tuple, set[str]] = {}
    for gang_key, level in exclusive.items():
        for name in _placed(snapshot, gang_key, nodes):
            path = level_path(nodes[name].labels, level)
            if path is not None:
                held.setdefault((level, path), set()).add(gang_key)
    return held


@SETTINGS
@given(topology_scenarios())
def test_exclusive_gangs_never_come_to_share_a_domain(scenario: Scenario) -> None:
    for before, after, now, nodes in _cycles_with_topology(scenario):
        earlier = _exclusive_holders(before, nodes)
        for domain, gangs in _exclusive_holders(after, nodes).items():
            if len(gangs) > 1:
                assert gangs <= earlier.get(domain, set()), (
                    f"{sorted(gangs)} share {domain} after the cycle at now={now}"
                )


#: Greedy head of line: no unit is ever placed within a backfilling limit, and nothing preempts.
_GREEDY = configs.map(lambda config: dataclasses.replace(config, head_of_line=HeadOfLine.NONE, topology=True))


@SETTINGS
@given(st.one_of(topology_scenarios(_GREEDY), preferred_scenarios()))
def test_a_preferred_gang_is_never_spread_wider_than_needed(scenario: Scenario) -> None:
    if not scenario.config.gangs:
        return  # pod at a time: members land one by one, each as close as it can
    for before, result, after, now in trajectory(scenario, cycles=3):
        if result.evictions:
            continue
        nodes = {node.name: node for node in before.nodes}
        binds: dict[str, list] = {}
        for bind in result.binds:
            if bind.gang is not None:
                binds.setdefault(bind.gang, []).append(bind)
        for gang in before.gangs:
            constraint = gang.topology
            if constraint is None or constraint.preferred not in LEVELS or gang.key not in binds:
                continue
            members = [pod for pod in before.pods if pod.gang == gang.key]
            waiting = [pod for pod in members if pod.pending and pod.reserved_node is None]
            if gang.satisfied or fell_back(gang, result) or len(waiting) != len(members):
                continue  # some members were placed before: they anchor the gang
            if len(binds[gang.key]) != len(waiting) or not _one_shape(waiting):
                continue
            where = [bind.node for bind in binds[gang.key]]
            spanned = _narrowest_common(where, nodes)
            preferred = LEVELS.index(constraint.preferred)
            for depth in range(spanned + 1, preferred + 1):
                roomy = _domain_with_room(after, nodes, waiting, where, LEVELS[depth])
                assert roomy is None, (
                    f"{gang.key} (preferred {constraint.preferred}) spans {sorted(where)} at "
                    f"now={now}, but {LEVELS[depth]} {roomy} had room for all {len(waiting)} members"
                )


def _one_shape(pods) -> bool:
    return len({(tuple(sorted(p.requests.items())), constraint_key(p)) for p in pods}) == 1


def _narrowest_common(where: list[str], nodes: dict) -> int:
    """The narrowest level (index in LEVELS) all ``where`` share a domain of; -1: none."""
    common = -1
    for depth, level in enumerate(LEVELS):
        if _spans_one(where, nodes, level):
            common = depth
    return common


def _domain_with_room(after, nodes: dict, pods, own: list[str], level: str):
    """A domain of ``level`` whose free room (after the cycle, plus the gang's own binds) would
    take every one of ``pods``; None when there is none."""
    used: dict[str, Counter] = {name: Counter() for name in nodes}
    for pod in after.pods:
        where = pod.node if pod.node is not None else (pod.reserved_node if pod.pending else None)
        if where in used:
            used[where].update(pod.requests)
            used[where]["pods"] += 1
    request = dict(pods[0].requests)
    for name in own:  # the gang's own binds are given back
        used[name].subtract(request)
        used[name]["pods"] -= 1
    mask = NodeFilter(tuple(nodes.values())).mask(pods[0])
    copies: Counter = Counter()
    for position, (name, node) in enumerate(nodes.items()):
        path = level_path(node.labels, level)
        if path is None or not mask[position]:
            continue
        fits = []
        for resource, amount in request.items():
            if amount > 0:
                fits.append((node.allocatable.get(resource, 0) - used[name][resource]) // amount)
        if "pods" in node.allocatable:
            fits.append(node.allocatable["pods"] - used[name]["pods"])
        copies[path] += max(min(fits), 0) if fits else len(pods)
    return next((path for path, count in copies.items() if count >= len(pods)), None)


# The engine's own properties, on clusters with racks and constrained gangs, each on the
# configurations it is checked on there.
_ANY_CONFIG = (
    engine_properties.test_no_node_is_ever_overcommitted,
    engine_properties.test_each_bind_is_a_pending_pod_bound_once,
    engine_properties.test_cycle_is_deterministic,
)
_GANG_CONFIG = (
    engine_properties.test_no_gang_binds_below_min_member,
    engine_properties.test_gang_group_binds_all_or_nothing,
    engine_properties.test_reservations_only_for_nonstrict_or_nominated,
)


@SETTINGS
@given(topology_scenarios(engine_properties.overcommit_configs))
def test_no_overcommit_sane_binds_and_determinism_hold_with_topology(scenario: Scenario) -> None:
    for check in _ANY_CONFIG:
        check.hypothesis.inner_test(scenario)


@SETTINGS
@given(topology_scenarios())
def test_the_gang_rules_hold_with_topology(scenario: Scenario) -> None:
    for check in _GANG_CONFIG:
        check.hypothesis.inner_test(scenario)
