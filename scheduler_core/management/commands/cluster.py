"""Change the simulated cluster at run time: nodes come and go, pods crash.

    manage.py cluster add-node NAME --cpu 32 --memory 128Gi [--gpu 8] [--label k=v ...] [--taint k=v:Effect]
    manage.py cluster remove-node NAME
    manage.py cluster cordon NAME | uncordon NAME
    manage.py cluster not-ready NAME | ready NAME
    manage.py cluster fail-pod NAMESPACE/NAME [--reason TEXT]

Each change wakes the scheduler, as a node or pod event would on a real cluster.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.services import nodes
from scheduler_core.services.kubelet import pod_fail
from scheduler_core.tasks import cycle_trigger


def _pairs(values: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise CommandError(f"--{what} {value!r}: expected KEY=VALUE")
        pairs[key] = rest
    return pairs


def _taint(value: str) -> dict[str, str]:
    head, sep, effect = value.rpartition(":")
    key, _, taint_value = head.partition("=")
    if not sep or not key or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
        raise CommandError(f"--taint {value!r}: expected KEY[=VALUE]:NoSchedule|PreferNoSchedule|NoExecute")
    return {"key": key, "value": taint_value, "effect": effect}


class Command(BaseCommand):
    help = "Add, remove, cordon nodes of the simulated cluster, or fail a pod."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser("add-node", help="Add a node.")
        add.add_argument("name")
        add.add_argument("--cpu", required=True, help="e.g. 32 or 500m")
        add.add_argument("--memory", required=True, help="e.g. 128Gi")
        add.add_argument("--gpu", help="nvidia.com/gpu count")
        add.add_argument("--pods", default="110", help="max pods (default 110)")
        add.add_argument("--label", action="append", default=[], help="KEY=VALUE, repeatable")
        add.add_argument("--taint", action="append", default=[], help="KEY[=VALUE]:EFFECT, repeatable")
        for action in ("remove-node", "cordon", "uncordon", "not-ready", "ready"):
            sub.add_parser(action).add_argument("name")
        fail = sub.add_parser("fail-pod", help="Fail a running pod, as a crash would.")
        fail.add_argument("pod", help="NAMESPACE/NAME")
        fail.add_argument("--reason", default="failed by an operator (manage.py cluster fail-pod)")

    def handle(self, *args, action: str, **options):
        try:
            message = self._do(action, options)
        except ValueError as error:
            raise CommandError(str(error)) from None
        cycle_trigger()
        self.stdout.write(message)

    def _do(self, action: str, options: dict) -> str:
        if action == "add-node":
            allocatable = {"cpu": options["cpu"], "memory": options["memory"], "pods": options["pods"]}
            if options["gpu"]:
                allocatable["nvidia.com/gpu"] = options["gpu"]
            nodes.node_add(
                name=options["name"],
                allocatable=allocatable,
                labels=_pairs(options["label"], "label"),
                taints=[_taint(t) for t in options["taint"]],
            )
            return f"node/{options['name']} added"
        if action == "remove-node":
            failed = nodes.node_remove(name=options["name"])
            return f"node/{options['name']} removed ({failed} pods failed)"
        if action in ("cordon", "uncordon"):
            nodes.node_cordon(name=options["name"], cordon=action == "cordon")
            return f"node/{options['name']} {action}ed"
        if action in ("ready", "not-ready"):
            nodes.node_set_ready(name=options["name"], ready=action == "ready")
            return f"node/{options['name']} is {action}"
        namespace, sep, name = options["pod"].partition("/")
        if not sep:
            raise ValueError(f"pod {options['pod']!r}: expected NAMESPACE/NAME")
        if not pod_fail(namespace, name, options["reason"]):
            raise ValueError(f"pod {options['pod']} is not bound and active")
        return f"pod/{options['pod']} failed"
