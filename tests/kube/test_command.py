"""``manage.py kube_watch`` as an operator runs it: a process that leads, mirrors and stops cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from scheduler_core.cluster.kube import readiness
from scheduler_core.models import Node
from tests.kube.cluster import PODGROUPS, node, wait_until
from tests.loop.workers import ROOT, database_url

pytestmark = pytest.mark.django_db(transaction=True)


def kubeconfig(path, url):
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
        f"clusters: [{{name: t, cluster: {{server: '{url}'}}}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    return path


def test_kube_watch_leads_mirrors_and_gives_the_lease_up_on_sigterm(kube_api, tmp_path):
    kube_api.add_crd(*PODGROUPS, kind="PodGroup")
    kube_api.create(node("node-a", cpu="8"))
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gangsched.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CLUSTER_BACKEND": "kubernetes",
        "KUBECONFIG": str(kubeconfig(tmp_path / "config", kube_api.url)),
        "GANGSCHED_LEASE_RENEW_S": "0.5",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "kube_watch", "--identity", "watcher-1", "--namespace", "gangsched"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lease = lambda: kube_api.get("coordination.k8s.io/v1/leases", "gangsched-scheduler", "gangsched")  # noqa: E731
        wait_until(
            lambda: (lease() or {}).get("spec", {}).get("holderIdentity") == "watcher-1", what="the Lease"
        )
        wait_until(lambda: Node.objects.filter(name="node-a").exists(), what="the node mirrored")
        wait_until(lambda: readiness.holder() == "watcher-1", what="ready to schedule")

        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    assert "Lease released" in output
    assert not lease()["spec"].get("holderIdentity")  # a successor need not wait for expiry
    assert readiness.holder() == ""


def test_kube_watch_refuses_to_run_on_the_simulated_cluster(settings):
    settings.CLUSTER_BACKEND = "simulated"
    with pytest.raises(CommandError, match="CLUSTER_BACKEND=kubernetes"):
        call_command("kube_watch")
