"""Delete objects, as ``kubectl delete`` does, with what the cluster would do about it.

    manage.py delete -f FILE|DIR|-            # every object of the manifests
    manage.py delete pod NAMESPACE/NAME ...   # (or NAME -n NAMESPACE)
    manage.py delete gang NAMESPACE/NAME ...
    manage.py delete node NAME ...

- a pod a workload owns (a Job's, a vcjob's, ...) of an active gang counts against its gang: its
  restart policy replaces it (or restarts or fails the gang); a bare Pod, like any other pod, is
  removed for good: its creator applies the next one (``services/delete.pod_delete``);
- a gang is deleted with its pods; a node's pods fail and their gangs reschedule them;
- with ``-f``: a PodGroup or GangJob deletes its gang (a KAI PodGroup with subgroups: its
  gangs) and pods, a Pod or workload its pods (for good: their owner is gone), a Node the node,
  a PriorityClass or WorkloadPriorityClass the class, a Namespace every gang and pod in it.

Each deletion prints ``<kind> "<name>" deleted`` (``from <ns> namespace`` for namespaced ones);
anything not found is reported and the command exits non-zero, unless ``--ignore-not-found``.
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from scheduler_core.declarations import DeclarationError, documents_parse
from scheduler_core.declarations.cluster import priority_classes
from scheduler_core.declarations.documents import documents_expand
from scheduler_core.declarations.kueue_priority import workload_priority_classes
from scheduler_core.declarations.queue_objects import QUEUE_OBJECTS
from scheduler_core.declarations.registry import manifest_load
from scheduler_core.declarations.topology_objects import TOPOLOGY_OBJECTS
from scheduler_core.models import Gang
from scheduler_core.services import delete
from scheduler_core.services.queues import QueueInUse, QueueNotFound
from scheduler_core.services.topology import TopologyInUse, TopologyNotFound

from .apply import manifest_files

KINDS = {"pod": "pod", "pods": "pod", "po": "pod", "gang": "gang", "gangs": "gang", "node": "node"}
KINDS["nodes"] = KINDS["no"] = "node"


def _line(kind: str, name: str, namespace: str | None = None, extra: str = "") -> str:
    where = f" from {namespace} namespace" if namespace else ""
    return f'{kind} "{name}" deleted{where}' + (f" ({extra})" if extra else "")


class Command(BaseCommand):
    help = "Delete pods, gangs, nodes (or every object of manifests), as kubectl delete does."

    def add_arguments(self, parser):
        parser.add_argument("kind", nargs="?", help="pod, gang or node")
        parser.add_argument("names", nargs="*", help="NAMESPACE/NAME (nodes: NAME)")
        parser.add_argument("-f", "--filename", action="append", help="FILE, DIR or - (stdin); repeatable")
        parser.add_argument("-n", "--namespace", default="default")
        parser.add_argument("--ignore-not-found", action="store_true")
        parser.add_argument("--by", default="an operator", help="who deletes (recorded in reasons)")

    def handle(self, *args, kind, names, filename, namespace, ignore_not_found, by, **options):
        self.by, missing = by, []
        if filename:
            if kind:
                raise CommandError("give either -f FILE or KIND NAME..., not both")
            for source in manifest_files(filename):
                missing += self._file(source)
        else:
            if not kind or not names:
                raise CommandError("usage: delete -f FILE | delete pod|gang|node NAME...")
            if kind not in KINDS:
                raise CommandError(f"unknown kind {kind!r}: one of pod, gang, node")
            for name in names:
                missing += self._named(KINDS[kind], name, namespace)
        if missing and not ignore_not_found:
            raise CommandError("; ".join(missing))

    def _named(self, kind: str, target: str, default_namespace: str) -> list[str]:
        try:
            if kind == "node":
                failed = delete.node_delete(name=target)
                self.stdout.write(_line("node", target, extra=f"{failed} pods failed" if failed else ""))
                return []
            namespace, sep, name = target.rpartition("/")
            namespace = namespace if sep else default_namespace
            if kind == "pod":
                outcome = delete.pod_delete(namespace=namespace, name=name, by=self.by)
                self.stdout.write(_line("pod", name, namespace, "" if outcome == "removed" else outcome))
            else:
                pods = delete.gang_delete(namespace=namespace, name=name, by=self.by)
                self.stdout.write(_line("gang", name, namespace, f"{len(pods)} pods"))
                for pod in pods:
                    self.stdout.write(_line("pod", pod, namespace))
        except delete.NotFound as error:
            return [str(error)]
        return []

    def _file(self, source) -> list[str]:
        label = "<stdin>" if source == "-" else str(source)
        data = sys.stdin.buffer.read() if source == "-" else source.read_bytes()
        try:
            manifests = documents_expand(documents_parse(data))
            with priority_classes(manifests), workload_priority_classes(manifests):
                loaded = [manifest_load(manifest) for manifest in manifests]
        except DeclarationError as error:
            where = f"{label}: {error.field}" if error.field else label
            raise CommandError(f"{where}: {error.reason}") from None
        missing, lines = [], []
        self.gone: set[str] = set()  # gangs deleted by this file: their pods went with them
        # In the file's order, as kubectl does, except queues: those go after everything else
        # and last to first, so a child queue goes before its parent and a gang before the queue
        # it names. Reported in the file's order.
        queues = [
            i for i, item in enumerate(loaded) if any(isinstance(o, QUEUE_OBJECTS) for o in item.objects)
        ]
        # Topologies after the queues, likewise last to first: a flavor before the
        # Topology it names, a parent HyperNode before its children.
        topology = [
            i for i, item in enumerate(loaded) if any(isinstance(o, TOPOLOGY_OBJECTS) for o in item.objects)
        ]
        rest = [i for i in range(len(loaded)) if i not in queues and i not in topology]
        order = rest + queues[::-1] + topology[::-1]
        per_item: dict[int, list[str]] = {}
        try:
            with transaction.atomic():
                for i in order:
                    per_item[i] = []
                    missing += self._loaded(loaded[i], per_item[i])
        except (QueueInUse, TopologyInUse) as error:
            raise CommandError(f"{label}: {error}") from None
        for i in range(len(loaded)):
            lines += per_item[i]
        for line in lines:
            self.stdout.write(line)
        return missing

    def _loaded(self, item, lines: list[str]) -> list[str]:
        kind, _, name = item.object_name.partition("/")
        found = False
        for obj in item.objects:
            try:
                extra = obj.delete()
            except (delete.NotFound, QueueNotFound, TopologyNotFound):
                continue
            found = True
            lines.append(_line(kind, name, extra=extra))
        gone, gang_pods, gangs_found = self.gone, [], False
        for gang in item.gangs:
            try:
                gang_pods += delete.gang_delete(namespace=gang.namespace, name=gang.name, by=self.by)
            except delete.NotFound:
                continue
            found = gangs_found = True
            gone.add(gang.key)
        if gangs_found and not item.pods:
            # One line per object, even for one of several gangs (a KAI PodGroup's subgroups).
            lines.append(_line(kind, name, item.gangs[0].namespace, f"{len(gang_pods)} pods"))
        rest = [pod for pod in item.pods if not (pod.gang and pod.gang.key in gone)]
        removed = delete.pods_remove([(pod.namespace, pod.name) for pod in rest], by=self.by)
        namespace = item.pods[0].namespace if item.pods else None
        if item.pods and (removed or len(rest) < len(item.pods)):
            found = True
            if kind != "pod":
                lines.append(_line(kind, name, namespace))
            lines.extend(_line("pod", pod.name, pod.namespace) for pod in item.pods)
        # A gang its pods declared (Koordinator annotations, YuniKorn task groups) or a
        # provisional one goes with its last pod.
        for ref in {pod.gang.key: pod.gang for pod in rest if pod.gang}.values():
            gang = Gang.objects.filter(namespace=ref.namespace, name=ref.name).first()
            if gang and (ref.spec or gang.provisional) and not gang.members.exists():
                delete.gang_delete(namespace=gang.namespace, name=gang.name, by=self.by)
                lines.append(_line("gang", gang.name, gang.namespace))
        if not found:
            where = f" in namespace {namespace}" if namespace else ""
            return [f'{kind} "{name}" not found{where}']
        return []
