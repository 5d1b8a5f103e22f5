"""Manifests in the formats job submitters already have, mapped to gangsched's gangs.

``documents.py`` parses text (YAML through ``yaml_stream.py``), ``registry.py`` holds the table
of accepted (apiVersion, kind) and picks a loader per format (one module each: ``podgroup``,
``koordinator``, ``yunikorn``, ``gangjob``, ``workloads``...), ``spec.py`` holds the normalized
result, ``validate.py`` the shared checks (``node_constraints.py`` for affinity, tolerations and
taints), ``apply.py`` writes it
(``manifests_apply``), ``provisional.py`` promotes provisional gangs after their grace period.

Imports the engine, models, reads, specs and services (and ``tasks.cycle_trigger``); nothing
below imports this package but the Kubernetes mirror.
"""

from .apply import ApplyResult, manifests_apply
from .documents import documents_parse
from .validate import DeclarationError

__all__ = ["ApplyResult", "DeclarationError", "documents_parse", "manifests_apply"]
