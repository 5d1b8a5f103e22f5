"""``manage.py kube_watch``: the Kubernetes backend's watcher process (one per deployment).

Takes the leader-election Lease, mirrors nodes, pods and PodGroups into the database, writes
PodGroup status and Events back, keeps placeholder pods in step. Stops cleanly on SIGTERM
(a pod's shutdown) or Ctrl-C, giving the Lease up so a successor takes over at once.
"""

from __future__ import annotations

import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from scheduler_core.cluster.kube.client import api_client
from scheduler_core.cluster.kube.watcher import Watcher


class Command(BaseCommand):
    help = "Watch the Kubernetes cluster and keep gangsched's database in step (CLUSTER_BACKEND=kubernetes)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--identity", default="", help="Name in the Lease (default: GANGSCHED_LEADER_ID or host)"
        )
        parser.add_argument("--namespace", default="", help="Namespace of the Lease (default: the pod's own)")

    def handle(self, *args, **options):
        if settings.CLUSTER_BACKEND != "kubernetes":
            raise CommandError(
                f"CLUSTER_BACKEND is {settings.CLUSTER_BACKEND!r}: kube_watch mirrors a real cluster, "
                "set CLUSTER_BACKEND=kubernetes"
            )
        watcher = Watcher(
            api_client(), identity_=options["identity"] or None, namespace=options["namespace"] or None
        )
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        self.stdout.write(f"kube_watch: {watcher.identity} watching (Lease in {watcher.elector.namespace})")
        watcher.run(stop)
        self.stdout.write("kube_watch: stopped, Lease released")
