"""The Kubernetes API emulator for the backend's tests (see ``tests/kube/emulator.py``), and a
small cluster in it with a watcher that leads and mirrors it (``tests/kube/cluster.py``)."""

import pytest

from scheduler_core.cluster.kube import readiness
from tests.kube.cluster import PODGROUPS, Harness, node
from tests.kube.emulator import KubeAPI


@pytest.fixture
def kube_api():
    """A started API server on a random port; ``kube_api.api_client()`` gives an official client."""
    api = KubeAPI()
    yield api
    api.close()


@pytest.fixture
def nodes():
    """The nodes of ``cluster``: two of 4 CPUs; a test module may override this fixture."""
    return [node(name, cpu="4") for name in ("node-a", "node-b")]


@pytest.fixture
def cluster(kube_api, nodes):
    kube_api.add_crd(*PODGROUPS, kind="PodGroup")
    for obj in nodes:
        kube_api.create(obj)
    harness = Harness(kube_api).start()
    yield harness
    harness.stop()
    readiness.ready_clear()


@pytest.fixture
def default_backend(cluster, settings):
    """Make the harness's backend the one services find with ``get_backend()``."""
    from scheduler_core import cluster as backends

    settings.CLUSTER_BACKEND = "kubernetes"
    backends._instances["kubernetes"] = cluster.backend
    yield cluster.backend
    backends._instances.pop("kubernetes", None)
