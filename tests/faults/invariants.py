"""What must hold after any fault: checked from the database, whatever happened before.

``assert_invariants`` is called by every test of this package (and by bench/soak.py and
bench/stateful.py) after the fault and the recovery. It reads the rows only, so it works for a
cycle that ran in this process, in a Celery worker that was SIGKILLed, or against a private
PostgreSQL (``using``):

1. the gang rule: every gang that is still active holds (bound and active, plus succeeded) either
   nothing or at least min_member pods, unless it is "after gang" (satisfied with the
   RestartFailedOnly policy, which lets it run below minMember, or satisfied with bare pods,
   which nobody recreates once deleted) or a Soft gang that fell back;
   a gang with binds still pending in the journal (an intent or a per-pod row) is in flight and
   judged once they settle;
2. no node is over-committed: the requests of its bound active pods (plus what other schedulers
   use) fit its allocatable, and so does the pod count;
3. no pod is bound twice: at most one pending bind per pod (in pending intents and per-pod rows
   together), at most one bound journal row per pod and cycle, and a bound pod is on the node its
   latest successful bind named;
4. reservations are only held by pending, unbound pods of gangs still waiting, on nodes that
   exist (no capacity is held by nobody);
5. once the loop is idle (``idle=True``) no pending bind (intent or row) is left.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from scheduler_core.engine.model import GangPhase
from scheduler_core.models import (
    BindIntent,
    BindJournal,
    BindState,
    Gang,
    IntentState,
    Member,
    MemberPhase,
    Node,
    RestartPolicy,
)
from scheduler_core.models.gangs import ACTIVE_MEMBER_PHASES

DONE = (GangPhase.FINISHED.value, GangPhase.FAILED.value, GangPhase.KILLED.value)
#: Gang phases whose pods may hold a reservation (TimedOut released everything it held).
WAITING = tuple(
    phase.value for phase in (GangPhase.PENDING, GangPhase.SCHEDULING, GangPhase.RUNNING, GangPhase.UNKNOWN)
)


def violations(*, using: str = "default", idle: bool = False) -> list[str]:
    """Every broken invariant, as a sentence naming the rows; empty when all hold."""
    members = list(
        Member.objects.using(using).values(
            "id", "namespace", "name", "gang_id", "phase", "node", "reserved_node", "requests", "owner"
        )
    )
    gangs = {g["id"]: g for g in Gang.objects.using(using).values()}
    nodes = {n["name"]: n for n in Node.objects.using(using).values("name", "allocatable", "external_usage")}
    pending = pending_binds(using)
    found: list[str] = []
    found += _gang_rule(gangs, members, {row["gang_id"] for row in pending}, idle)
    found += _capacity(nodes, members)
    found += _binds(using, members, pending)
    found += _reservations(gangs, nodes, members)
    if idle and pending:
        found.append(f"{len(pending)} pending binds left in the journal while the loop is idle")
    return found


def pending_binds(using: str = "default") -> list[dict]:
    """``{"member_id", "gang_id"}`` of every bind journaled and not settled: the members of
    pending intents, and pending per-pod rows."""
    pending = list(
        BindJournal.objects.using(using).filter(state=BindState.PENDING).values("member_id", "gang_id")
    )
    intents = BindIntent.objects.using(using).filter(state=IntentState.PENDING)
    for gang_id, member_ids in intents.values_list("gang_id", "member_ids"):
        pending += [{"member_id": member_id, "gang_id": gang_id} for member_id in member_ids]
    return pending


def assert_invariants(*, using: str = "default", idle: bool = False) -> None:
    found = violations(using=using, idle=idle)
    assert not found, "invariants broken:\n  " + "\n  ".join(found)


def _key(row: dict) -> str:
    return f"{row['namespace']}/{row['name']}"


def _active(member: dict) -> bool:
    return member["phase"] in ACTIVE_MEMBER_PHASES


def _gang_rule(gangs: dict, members: list[dict], in_flight: set, idle: bool) -> list[str]:
    held: Counter = Counter()
    bare = {m["gang_id"] for m in members if not m["owner"]}
    for m in members:
        if m["gang_id"] is not None and ((_active(m) and m["node"]) or m["phase"] == MemberPhase.SUCCEEDED):
            held[m["gang_id"]] += 1
    found = []
    for pk, gang in gangs.items():
        if gang["phase"] in DONE or gang["fallen_back"] or (pk in in_flight and not idle):
            continue
        after_gang = gang["satisfied"] and (
            gang["restart_policy"] == RestartPolicy.RESTART_FAILED_ONLY or pk in bare
        )
        if 0 < held[pk] < gang["min_member"] and not after_gang:
            found.append(
                f"gang {gang['namespace']}/{gang['name']} ({gang['phase']}, satisfied={gang['satisfied']}) "
                f"holds {held[pk]} pods < minMember {gang['min_member']}: partially bound"
            )
    return found


def _capacity(nodes: dict, members: list[dict]) -> list[str]:
    used: defaultdict[str, Counter] = defaultdict(Counter)
    for m in members:
        if _active(m) and m["node"]:
            used[m["node"]].update({k: int(v) for k, v in m["requests"].items() if k != "pods"})
            used[m["node"]]["pods"] += 1
    found = []
    for name, usage in used.items():
        node = nodes.get(name)
        if node is None:
            continue  # pods on a node that is gone fail at the next kubelet tick (or reconcile)
        usage = usage + Counter(node["external_usage"])
        for resource, amount in usage.items():
            if resource == "pods" and "pods" not in node["allocatable"]:
                continue
            if amount > int(node["allocatable"].get(resource, 0)):
                found.append(
                    f"node {name} over-committed: {resource} {amount} > allocatable "
                    f"{node['allocatable'].get(resource, 0)}"
                )
    return found


def _binds(using: str, members: list[dict], pending: list[dict]) -> list[str]:
    found = [
        f"member {pk} has {count} pending binds"
        for pk, count in Counter(row["member_id"] for row in pending).items()
        if count > 1
    ]
    bound_rows = BindJournal.objects.using(using).filter(state=BindState.BOUND, cycle__isnull=False)
    found += [
        f"member {pk} has {count} bound journal rows from cycle {cycle}"
        for (pk, cycle), count in Counter(bound_rows.values_list("member_id", "cycle_id")).items()
        if count > 1
    ]
    latest: dict[int, str] = {}
    bound = BindJournal.objects.using(using).filter(state=BindState.BOUND).order_by("id")
    for member_id, node in bound.values_list("member_id", "node"):
        latest[member_id] = node
    for m in members:
        if _active(m) and m["node"] and m["id"] in latest and latest[m["id"]] != m["node"]:
            found.append(f"pod {_key(m)} is on {m['node']} but its last bind was to {latest[m['id']]}")
    return found


def _reservations(gangs: dict, nodes: dict, members: list[dict]) -> list[str]:
    found = []
    for m in members:
        node = m["reserved_node"]
        if node is None:
            continue
        gang = gangs.get(m["gang_id"])
        if m["phase"] != MemberPhase.PENDING or m["node"]:
            found.append(f"pod {_key(m)} ({m['phase']}, on {m['node']}) still reserves {node}")
        elif gang is not None and gang["phase"] not in WAITING:
            found.append(f"pod {_key(m)} reserves {node} for gang {gang['name']}, which is {gang['phase']}")
        elif node not in nodes:
            found.append(f"pod {_key(m)} reserves {node}, which does not exist")
    return found
