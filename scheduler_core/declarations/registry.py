"""Which module reads what: one module per format, registered here.

- ``LOADERS``: (API group, kind) -> a function that turns one manifest object into gangs and
  pods (``Loaded``). A new object format (Volcano's PodGroup, the upstream Workload) is a module
  with a ``KINDS`` dict, added to ``_OBJECT_FORMATS``.
- ``POD_READERS``: functions that read a pod's labels and annotations and say which gang it
  belongs to (``GangRef``), in order: the first that recognises the pod wins. A new pod-level
  format (Kueue's pod-group label) is a module with a ``pod_gang`` function, added here.
"""

from __future__ import annotations

from . import cluster, gangjob, koordinator, kueue, podgroup, upstream, volcano, workloads, yunikorn
from . import validate as v
from .documents import Manifest
from .spec import Loaded

_OBJECT_FORMATS = (podgroup, gangjob, workloads, cluster, volcano, upstream)
LOADERS = {kind: load for module in _OBJECT_FORMATS for kind, load in module.KINDS.items()}
POD_READERS = (koordinator.pod_gang, podgroup.pod_gang, volcano.pod_gang, yunikorn.pod_gang, kueue.pod_gang)


def manifest_load(manifest: Manifest) -> Loaded:
    load = LOADERS.get((manifest.group, manifest.kind))
    if load is None:
        known = ", ".join(sorted(f"{kind} ({group or 'v1'})" for group, kind in LOADERS))
        raise v.DeclarationError(
            v.join(manifest.path, "kind"),
            f"gangsched does not read {manifest.kind} of {manifest.api_version} (it reads: {known})",
        )
    return load(manifest, POD_READERS)
