"""The API client: where the cluster is, and how fast gangsched may talk to it.

The official client has no client-side rate limit (client-go's QPS/burst token bucket), so
``RateLimiter`` gives one, shared by every call a backend makes: a burst of binds for a gang of
100 is spread the way kube-scheduler's would be (``--kube-api-qps 50 --kube-api-burst 100``).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from kubernetes import client, config

_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class RateLimiter:
    """A token bucket: ``burst`` calls at once, then ``qps`` per second. Thread-safe."""

    def __init__(self, qps: float, burst: int, *, clock=time.monotonic, sleep=time.sleep) -> None:
        if qps <= 0 or burst < 1:
            raise ImproperlyConfigured(f"client rate limit qps={qps}, burst={burst}: both must be positive")
        self.qps, self.burst = qps, burst
        self._tokens = float(burst)
        self._clock, self._sleep = clock, sleep
        self._last = clock()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token, waiting for it if needed; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait:
            self._sleep(wait)
        return wait


def api_client() -> client.ApiClient:
    """A client for the configured cluster: ``KUBECONFIG`` (or ~/.kube/config) when present,
    else the pod's service account, as kubectl and controllers look for them."""
    try:
        if os.environ.get("KUBECONFIG") or Path("~/.kube/config").expanduser().exists():
            configuration = client.Configuration()
            # The client reads KUBECONFIG once, at import: pass it, so the current value counts.
            config.load_kube_config(
                config_file=os.environ.get("KUBECONFIG"), client_configuration=configuration
            )
        else:
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
    except config.ConfigException as error:
        raise ImproperlyConfigured(
            f"CLUSTER_BACKEND=kubernetes but no cluster is configured ({error}); set KUBECONFIG or run "
            "gangsched in a pod with a service account"
        ) from None
    # Binds run on a thread pool: let every worker thread have a connection.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 4, 32)
    return client.ApiClient(configuration)


def rate_limiter() -> RateLimiter:
    return RateLimiter(settings.GANGSCHED_KUBE_QPS, settings.GANGSCHED_KUBE_BURST)


def own_namespace() -> str:
    """Where gangsched keeps its Lease: the setting, else the pod's namespace, else default."""
    if settings.GANGSCHED_KUBE_NAMESPACE:
        return settings.GANGSCHED_KUBE_NAMESPACE
    try:
        return _SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or "default"
    except OSError:
        return "default"


def identity() -> str:
    """This process's name in the Lease: the setting, else host name and pid (the pod name in
    a cluster; the pid tells two processes on one host apart)."""
    return settings.GANGSCHED_LEADER_ID or f"{socket.gethostname()}_{os.getpid()}"
