"""Manifests in the formats job submitters already have, mapped to gangsched's gangs.

``documents.py`` parses text, ``registry.py`` picks a loader per format (one module each:
``podgroup``, ``koordinator``, ``yunikorn``, ``gangjob``, ``workloads``), ``spec.py`` holds the
normalized result, ``validate.py`` the shared checks, ``apply.py`` writes it
(``manifests_apply``), ``provisional.py`` promotes provisional gangs after their grace period.
"""

from .apply import ApplyResult, manifests_apply
from .documents import documents_parse
from .validate import DeclarationError

__all__ = ["ApplyResult", "DeclarationError", "documents_parse", "manifests_apply"]
