"""The Kubernetes API emulator for the backend's tests (see ``tests/kube/emulator.py``)."""

import pytest

from tests.kube.emulator import KubeAPI


@pytest.fixture
def kube_api():
    """A started API server on a random port; ``kube_api.api_client()`` gives an official client."""
    api = KubeAPI()
    yield api
    api.close()
