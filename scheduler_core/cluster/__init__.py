"""The cluster backends, chosen by ``settings.CLUSTER_BACKEND``.

Like healthchecks' TRANSPORTS, each backend is a label and a dotted path imported on first use,
so the simulated cluster never imports the Kubernetes client and vice versa. One instance per
process is kept (the simulated cluster's seeded failure injection is a sequence, not a function
of the call); tests that change the settings get a fresh one (see ``_settings_changed``).

Imports the engine, models, db, specs and services; ``kube/mirror.py`` also the declarations
(watched objects are applied as manifests are), as its import says.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from .base import BindOutcome, BindRequest, BindResult, ClusterBackend

__all__ = [
    "BACKENDS",
    "BindOutcome",
    "BindRequest",
    "BindResult",
    "ClusterBackend",
    "ClusterError",
    "get_backend",
]

#: name -> (label, dotted path of the class); None: not available yet.
BACKENDS: dict[str, tuple[str, str | None]] = {
    "simulated": ("Simulated cluster (PostgreSQL)", "scheduler_core.cluster.simulated.SimulatedCluster"),
    "kubernetes": ("Kubernetes API", "scheduler_core.cluster.kube.backend.KubernetesCluster"),
}

_instances: dict[str, ClusterBackend] = {}


class ClusterError(RuntimeError):
    """A backend call that failed and may be retried (an API error, an injected fault)."""


def get_backend(name: str | None = None) -> ClusterBackend:
    """The backend named ``name``, or by ``settings.CLUSTER_BACKEND``; one instance per process."""
    name = name or settings.CLUSTER_BACKEND
    backend = _instances.get(name)
    if backend is None:
        if name not in BACKENDS:
            raise ImproperlyConfigured(f"unknown cluster backend {name!r}; use one of: {', '.join(BACKENDS)}")
        path = BACKENDS[name][1]
        if path is None:
            raise ImproperlyConfigured(f"the {name} backend is not available; use CLUSTER_BACKEND=simulated")
        backend = _instances[name] = import_string(path)()
    return backend


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs) -> None:
    # override_settings in tests: a backend built from the old values must not outlive them.
    if setting == "CLUSTER_BACKEND" or setting.startswith("GANGSCHED_SIM_"):
        _instances.clear()
