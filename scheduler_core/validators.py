"""Shape checks for the JSON fields that mirror Kubernetes objects and engine inputs.

The JSON keeps Kubernetes' own spelling (``matchExpressions``, ``effect``...), so a manifest's
fragments are stored as they are; ``snapshot/build.py`` turns them into engine dataclasses. These
validators run in ``full_clean()`` (the admin, model forms, serializers that call it), so a
malformed row is refused where it is entered instead of failing a scheduling cycle later.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.core.exceptions import ValidationError

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: A Gt/Lt value: an int64 in decimal that is also a label value (digits, no sign).
LABEL_INTEGER = re.compile(r"[0-9]{1,19}")


def _fail(message: str, value: Any) -> None:
    """The offending value shown as JSON, the submitter's own notation (not Python's repr)."""
    raise ValidationError(f"{message}: {json.dumps(value, default=str)}", code="invalid")


def is_int64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def is_label_integer(value: Any) -> bool:
    """What Kubernetes takes as a Gt/Lt value: ``strconv.ParseInt(value, 10, 64)`` of a label."""
    return isinstance(value, str) and bool(LABEL_INTEGER.fullmatch(value)) and int(value) <= INT64_MAX


def validate_resource_map(value: Any) -> None:
    """``{"cpu": 4000, "memory": 8589934592, "nvidia.com/gpu": 2}``: canonical non-negative ints."""
    if not isinstance(value, dict):
        _fail("resources must be an object of name -> integer", value)
    for name, amount in value.items():
        # bool is an int subclass; True as "1 GPU" is a bug, not a quantity.
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
            _fail(f"resource {json.dumps(name)} must be a non-negative integer (canonical units)", amount)


def validate_string_map(value: Any) -> None:
    """Labels, annotations, node selectors: string -> string."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        _fail("must be an object of string -> string", value)


def validate_taints(value: Any) -> None:
    if not isinstance(value, list):
        _fail("taints must be a list", value)
    for taint in value:
        if not isinstance(taint, dict) or not isinstance(taint.get("key"), str) or not taint["key"]:
            _fail("a taint needs a non-empty key", taint)
        if taint.get("effect", "NoSchedule") not in TAINT_EFFECTS:
            _fail(f"a taint's effect must be one of {', '.join(TAINT_EFFECTS)}", taint)


def validate_tolerations(value: Any) -> None:
    if not isinstance(value, list):
        _fail("tolerations must be a list", value)
    for toleration in value:
        if not isinstance(toleration, dict):
            _fail("a toleration must be an object", toleration)
        if toleration.get("operator", "Equal") not in TOLERATION_OPERATORS:
            _fail("a toleration's operator must be Equal or Exists", toleration)
        if toleration.get("effect", "") not in ("", *TAINT_EFFECTS):
            _fail("a toleration's effect must be empty or a taint effect", toleration)
        if toleration.get("tolerationSeconds") is not None and not is_int64(toleration["tolerationSeconds"]):
            _fail("a toleration's tolerationSeconds must be an integer within int64", toleration)


def validate_affinity(value: Any) -> None:
    """Required node affinity: a list of ``{"matchExpressions": [{"key", "operator", "values"}]}``
    terms (Kubernetes' ``nodeSelectorTerms``), ORed; an empty list allows every node."""
    if not isinstance(value, list):
        _fail("affinity must be a list of node selector terms", value)
    for term in value:
        if not isinstance(term, dict) or not isinstance(term.get("matchExpressions", []), list):
            _fail("a node selector term must be an object with a matchExpressions list", term)
        for requirement in term.get("matchExpressions", []):
            if not isinstance(requirement, dict) or not isinstance(requirement.get("key"), str):
                _fail("a match expression needs a key", requirement)
            if requirement.get("operator") not in SELECTOR_OPERATORS:
                _fail(
                    f"a match expression's operator must be one of {', '.join(SELECTOR_OPERATORS)}",
                    requirement,
                )
            values = requirement.get("values", [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                _fail("a match expression's values must be a list of strings", requirement)
            if requirement["operator"] in ("Gt", "Lt") and not (
                len(values) == 1 and is_label_integer(values[0])
            ):
                _fail(
                    "Gt and Lt take exactly one value, an integer from 0 to 2^63-1 in digits",
                    requirement,
                )


def validate_gang_keys(value: Any) -> None:
    """A gang group's members: ``"namespace/name"`` strings, no duplicates."""
    if not isinstance(value, list):
        _fail("members must be a list of namespace/name keys", value)
    for key in value:
        if not isinstance(key, str) or key.count("/") != 1 or not all(key.split("/")):
            _fail("a member must be a namespace/name key", key)
    if len(set(value)) != len(value):
        _fail("members must not repeat", value)
