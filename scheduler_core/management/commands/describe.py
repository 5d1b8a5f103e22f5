"""Show one object in detail, as ``kubectl describe`` does.

    manage.py describe gang NAMESPACE/NAME [-o json]
    manage.py describe application NAMESPACE/APPLICATION-ID [-o json]
    manage.py describe queue NAME [-o json]
    manage.py describe topology NAME [-o json]

State, what was declared (min member, mode, style, timeout), when a waiting gang is expected
to start (its stored forecast, with its place and age), the gang group and each of its
gangs' progress, the members with their node and phase (and, with a topology, the domain of each
level their node is in, the gang's topology constraint and how many domains it spans), the
engine's latest explanation and the last history events. An application (YuniKorn's
applicationId) is shown as its gangs, each described so. A queue (cluster-scoped: NAME alone)
shows its amounts, live figures, children, LocalQueues, who may submit to it and its active
gangs (``_queues.py``); a topology its levels and each level's domains with their
free and allocatable (``_topologies.py``).
"""

from __future__ import annotations

import json
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from scheduler_core.engine.quantity import QuantityError, canonical_amount, display_quantity, is_display_exact
from scheduler_core.management.commands import _queues, _topologies
from scheduler_core.management.commands.get import forecast_json, quantities
from scheduler_core.models import Gang
from scheduler_core.reads.forecasts import forecast_of, forecast_view, ordinal
from scheduler_core.reads.runtimes import gang_runtime
from scheduler_core.reads.selectors import (
    gang_events,
    gang_get,
    gang_group_progress,
    gang_list,
    gang_members,
    gang_progress,
    gang_state,
)
from scheduler_core.reads.timeouts import gang_timeout
from scheduler_core.reads.topology import gang_topology
from scheduler_core.reads.why import gang_why


def gang_detail(gang: Gang) -> dict:
    members = list(gang_members(gang))
    topology = gang_topology(gang, members)
    return {
        "namespace": gang.namespace,
        "name": gang.name,
        "state": gang_state(gang),
        "provisional_until": gang.provisional_until.isoformat() if gang.provisional_until else None,
        "min_member": gang.min_member,
        "total_number": gang.total_number,
        "min_resources": quantities(gang.min_resources or {}),
        "mode": gang.mode,
        "style": gang.style,
        "wait_seconds": gang.wait_seconds,
        "timeout": _timeout(gang),
        "runtime": gang_runtime(gang),
        "forecast": forecast_json(forecast_view(gang, forecast_of(gang), sees_all=True)),
        "priority": gang.priority,
        "queue": gang.queue,
        "placement": gang.placement,
        "restart_policy": gang.restart_policy,
        "source_format": gang.source_format,
        "application": gang.application or None,
        "submitter": gang.submitter,
        "created": gang.created.isoformat(),
        "progress": gang_progress(gang),
        "group": {"key": gang.group.key, "gangs": gang_group_progress(gang)} if gang.group else None,
        "members": [
            {
                "name": m.name,
                "phase": m.phase,
                "node": m.node,
                "reserved_node": m.reserved_node,
                "requests": quantities(m.requests or {}),
                "domains": domains,
            }
            for m, domains in zip(members, topology["domains"], strict=True)
        ],
        # Topology: the gang's constraint and, per level of every topology, the domains it spans.
        "topology": {"constraint": topology["constraint"], "spans": topology["spans"]},
        "explanation": {"reason": gang.reason, "message": gang.message, "details": gang.details}
        if gang.reason
        else None,
        # The same, with per shape of member the nodes each reason rules out (reads/why.py).
        "why": gang_why(gang),
        "events": [
            {"time": e.created.isoformat(), "kind": e.kind, "reason": e.reason} for e in gang_events(gang)
        ],
    }


def _timeout(gang: Gang) -> dict:
    now = timezone.now()
    state = gang_timeout(gang, now)
    return {
        "state": state.state,
        "deadline": state.deadline.isoformat() if state.deadline else None,
        "text": state.text(now),
    }


def _shown(name: str, text: str) -> str:
    """An exact quantity as the pages display it (``display_quantity``), the exact form after it
    where the display rounds: ``244Gi (250000Mi)``."""
    try:
        amount = canonical_amount(name, text)
    except QuantityError:
        return text
    shown = display_quantity(name, amount)
    return shown if is_display_exact(name, amount) else f"{shown} ({text})"


def _resource_list(quantities: dict[str, str]) -> str:
    """``cpu 16.5, memory 128Gi``: requests as the pages show them."""
    return ", ".join(f"{name} {_shown(name, text)}" for name, text in quantities.items())


def _level(key: str) -> str:
    """``topology.gangsched.io/rack`` is ``rack``, as the pages show it."""
    return key.rsplit("/", 1)[-1]


def _domain_list(domains: dict[str, str | None]) -> str:
    """``block=b0 rack=r3``: where a member landed, at each level it is in a domain of."""
    return " ".join(f"{_level(key)}={domain}" for key, domain in domains.items() if domain is not None)


def _topology_lines(topology: dict) -> list[str]:
    c = topology["constraint"]
    if not (c["required"] or c["preferred"] or topology["spans"]):
        return []
    own = " (exclusive)" if c["exclusive"] else ""
    wanted = [f"required {c['required']}{own}"] if c["required"] else []
    wanted += [f"preferred {c['preferred']}"] if c["preferred"] else []
    named = f" (topology {c['topology']})" if c["topology"] else ""
    lines = [f"Topology:       {', '.join(wanted) or '<none>'}{named}"]
    if topology["spans"]:
        spans = ", ".join(f"{n} {_level(key)}" for key, n in topology["spans"].items())
        lines.append(f"Spans:          {spans} (bound members)")
    return lines


def _forecast_lines(f: dict | None) -> list[str]:
    """The Forecast section: when it starts (absolute, and from now), its place, what it waits
    for, and the forecast's age."""
    if f is None:
        return []
    start = f"{f['text']}"
    if f["start_p50"]:
        start += f": at {_local(f['start_p50'])}"
        if f["start_p10"]:
            latest = _local(f["start_p90"]) if f["start_p90"] else "?"
            start += f", between {_local(f['start_p10'])} and {latest}"
    if f["note"]:
        start += f" ({f['note']})"
    age = f"made at {_local(f['made_at'])}"
    if f["stale"]:
        age += " (stale: older than three forecast intervals)"
    lines = [
        "Forecast:",
        f"  Starts:       {start}",
        f"  Place:        {ordinal(f['position_in_queue'] + 1)} in queue {f['queue']} "
        f"({ordinal(f['position_in_local_queue'] + 1)} in its local queue), "
        f"{ordinal(f['position_in_cluster'] + 1)} in the cluster",
    ]
    if f["waiting_for"]:
        lines.append(f"  Waiting for:  {f['waiting_for']['reason']}: {f['waiting_for']['message']}")
    lines.append(f"  Forecast:     {age}")
    return lines


def _local(iso: str) -> str:
    return timezone.localtime(datetime.fromisoformat(iso)).strftime("%Y-%m-%d %H:%M:%S")


def _why_lines(why: dict | None) -> list[str]:
    """Per shape of member, the nodes available and the nodes each reason rules out."""
    lines = []
    for shape in (why or {}).get("shapes", ()):
        lines.append(
            f"  {shape['members']} x {{{shape['requests_text']}}}: "
            f"{shape['available']}/{shape['nodes']} nodes available"
        )
        for row in shape["reasons"]:
            detail = f"  [{row['detail']}]" if row["detail"] else ""
            lines.append(f"    {row['count']:>5}  {row['label']}{detail}")
    return lines


def gang_text(d: dict) -> str:
    lines = [
        f"Name:           {d['namespace']}/{d['name']}",
        f"State:          {d['state']}"
        + (
            f" (until {d['provisional_until']}: waiting for its declaration)"
            if d["provisional_until"]
            else ""
        ),
        f"Min member:     {d['min_member']}" + (f" of {d['total_number']}" if d["total_number"] else ""),
        f"Min resources:  {_resource_list(d['min_resources']) or '<none>'}",
        f"Mode / style:   {d['mode']} / {d['style']}",
        f"Timeout:        {d['timeout']['text']}",
        f"Runtime:        {d['runtime']['text']}",
        f"Priority:       {'<from pods>' if d['priority'] is None else d['priority']}   Queue: {d['queue']}",
        f"Source:         {d['source_format'] or '<api>'}   Submitter: {d['submitter'] or '<none>'}",
        f"Application:    {d['application'] or '<none>'}",
        "Progress:       {bound}/{min_member} bound, {pending} pending, {members} members".format(
            **d["progress"]
        ),
    ]
    if d["group"]:
        lines.append(f"Gang group:     {d['group']['key']}")
        for g in d["group"]["gangs"]:
            lines.append(f"  {g['key']:<40} {g['state']:<13} {g['bound']}/{g['min_member'] or '?'} bound")
    lines.extend(_topology_lines(d["topology"]))
    lines.append("Members:")
    for m in d["members"] or [{"name": "<none>", "phase": "", "node": None, "requests": {}}]:
        node = m["node"] or "<pending>" if m["phase"] else ""
        line = f"  {m['name']:<40} {m['phase']:<10} {node:<20} {_resource_list(m['requests'])}"
        if m["node"] and any(m.get("domains", {}).values()):
            line = f"{line.rstrip()}  [{_domain_list(m['domains'])}]"
        lines.append(line.rstrip())
    lines.extend(_forecast_lines(d["forecast"]))
    explanation = d["explanation"]
    lines.append(
        f"Explanation:    {explanation['reason']}: {explanation['message']}"
        if explanation
        else "Explanation:    <none>"
    )
    lines.extend(_why_lines(d.get("why")))
    lines.append("Events:")
    for e in d["events"]:
        lines.append(f"  {e['time']}  {e['kind']:<10} {e['reason']}")
    return "\n".join(lines)


def application_get(key: tuple[str, str]) -> list[Gang]:
    namespace, application = key
    gangs = list(gang_list(namespace=namespace).filter(application=application))
    if not gangs:
        raise Gang.DoesNotExist
    return gangs


def application_detail(gangs: list[Gang]) -> dict:
    return {
        "namespace": gangs[0].namespace,
        "application": gangs[0].application,
        "gangs": [gang_detail(gang) for gang in gangs],
    }


def application_text(d: dict) -> str:
    head = f"Application:    {d['namespace']}/{d['application']} ({len(d['gangs'])} gangs)"
    return "\n\n".join([head, *(gang_text(gang) for gang in d["gangs"])])


DESCRIBERS = {
    "gang": (lambda key: gang_get(*key), gang_detail, gang_text),
    "application": (application_get, application_detail, application_text),
}
#: Cluster-scoped resources: NAME alone, no namespace.
CLUSTER_DESCRIBERS = {
    "queue": (_queues.queue_get, _queues.queue_detail, _queues.queue_text),
    "topology": (_topologies.topology_get, _topologies.topology_detail, _topologies.topology_text),
}


class Command(BaseCommand):
    help = (
        "Describe a gang (or an application's gangs): state, members, placement, explanation, "
        "history; or a queue: amounts, usage, who may submit; or a topology: levels and domains."
    )
    # A read answers at once, as kubectl does: Django's system checks would import every URL
    # and view (the whole web side) first. `manage.py check`, migrate and the servers run them.
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("resource", help=f"one of: {', '.join([*DESCRIBERS, *CLUSTER_DESCRIBERS])}")
        parser.add_argument("key", help="NAMESPACE/NAME (a queue or a topology: NAME)")
        parser.add_argument("-o", "--output", choices=["json"])

    def handle(self, *args, resource: str, key: str, output: str | None, **options):
        resource = {"topologies": "topology", "topo": "topology"}.get(resource, resource.rstrip("s"))
        if resource in CLUSTER_DESCRIBERS:
            get, detail, text = CLUSTER_DESCRIBERS[resource]
            try:
                obj = get(key)
            except (_queues.QueueNotFound, _topologies.TopologyNotFound):
                raise CommandError(f"{resource} {key} not found") from None
            data = detail(obj)
            self.stdout.write(json.dumps(data, indent=2) if output == "json" else text(data))
            return
        if resource not in DESCRIBERS:
            known = ", ".join([*DESCRIBERS, *CLUSTER_DESCRIBERS])
            raise CommandError(f"unknown resource {resource!r}; one of: {known}")
        namespace, sep, name = key.partition("/")
        if not sep or not namespace or not name:
            raise CommandError(f"{key!r}: expected NAMESPACE/NAME")
        get, detail, text = DESCRIBERS[resource]
        try:
            obj = get((namespace, name))
        except Gang.DoesNotExist:
            raise CommandError(f"{resource} {key} not found") from None
        data = detail(obj)
        self.stdout.write(json.dumps(data, indent=2) if output == "json" else text(data))
