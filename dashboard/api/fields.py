"""Strict input fields shared by the API's serializers (``serializers.py``) and views.

Input fields are strict on purpose: a JSON submission is typed, so ``"3"`` where an integer
belongs, ``true`` where a quantity belongs, or a key nobody reads is a mistake to report, not to
guess around. Quantities go through ``scheduler_core.engine.quantity`` (Kubernetes' grammar) with
the traps of a plain ``Decimal``/``float`` named explicitly: ``NaN``, ``Infinity``, ``1_000`` and
``1e999999999`` are all refused, and amounts are capped.
"""

from __future__ import annotations

import math
import re
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scheduler_core.declarations.validate import MAX_QUANTITY, MAX_WAIT_SECONDS, limit
from scheduler_core.engine.quantity import QuantityError, canonical_amount
from scheduler_core.validators import validate_affinity, validate_tolerations

# ---------------------------------------------------------------- limits

# Quantities and wait times have the limits manifests have (scheduler_core/declarations/
# validate.py, settings GANGSCHED_MAX_QUANTITY and GANGSCHED_MAX_WAIT_SECONDS), read per request.
MAX_DURATION_SECONDS = 366 * 24 * 3600
PRIORITY_MIN, PRIORITY_MAX = -(2**31), 2 * 10**9  # Kubernetes' int32 priority; system classes top out at 2e9
MAX_MAP_ENTRIES = 64
MAX_LABEL_VALUE = 63
MAX_ANNOTATION_VALUE = 4096

# ---------------------------------------------------------------- names (RFC 1123)

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")

NOT_A_LABEL = (
    "must be an RFC 1123 label: at most 63 lowercase letters, digits and '-', "
    "starting and ending with a letter or digit"
)
NOT_A_SUBDOMAIN = (
    "must be an RFC 1123 subdomain: dot-separated labels of at most 63 lowercase letters, digits "
    "and '-', each starting and ending with a letter or digit, at most 253 characters in all"
)
NOT_A_QUALIFIED_NAME = (
    "must be a Kubernetes qualified name: an optional DNS subdomain prefix and '/', then at most "
    "63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
)


def rfc1123_label_error(value: str, max_length: int = 63) -> str | None:
    if len(value) > max_length or not _LABEL.fullmatch(value):
        return NOT_A_LABEL if max_length == 63 else f"{NOT_A_LABEL} (here at most {max_length})"
    return None


def rfc1123_subdomain_error(value: str, max_length: int = 253) -> str | None:
    if not value or len(value) > max_length:
        return NOT_A_SUBDOMAIN if max_length == 253 else f"{NOT_A_SUBDOMAIN} (here at most {max_length})"
    if any(rfc1123_label_error(label) for label in value.split(".")):
        return NOT_A_SUBDOMAIN
    return None


def qualified_name_error(value: str) -> str | None:
    prefix, _, name = value.rpartition("/")
    if "/" in value and (not prefix or rfc1123_subdomain_error(prefix)):
        return NOT_A_QUALIFIED_NAME
    if len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return NOT_A_QUALIFIED_NAME
    return None


class _NameField(serializers.CharField):
    """A name checked by ``check`` (one of the RFC 1123 checks above), up to ``max_length``."""

    check = staticmethod(rfc1123_label_error)
    default_max_length = 63

    def __init__(self, max_length: int | None = None, **kwargs):
        self.name_max_length = self.default_max_length if max_length is None else max_length
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        error = self.check(data, self.name_max_length)
        if error:
            raise serializers.ValidationError(error)
        return data


class LabelNameField(_NameField):
    """An RFC 1123 label (namespaces, task names)."""


class SubdomainNameField(_NameField):
    """An RFC 1123 subdomain (gang and pod names, queues)."""

    check = staticmethod(rfc1123_subdomain_error)
    default_max_length = 253


# ---------------------------------------------------------------- numbers


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: not a string (DRF would take ``"1_000"``), not a bool, not ``2.0``."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return data


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean: not ``"yes"``, ``"true"``, ``"on"`` or ``1``, which DRF would take as true
    (the apiserver's strict decoding refuses them too)."""

    default_error_messages = {"invalid": "must be true or false (a JSON boolean)"}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictNumberField(serializers.FloatField):
    """A finite JSON number: not a string (DRF would take ``"1_000"`` or ``"nan"``), not a bool."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        try:
            value = float(data)
        except OverflowError:
            self.fail("overflow")
        if not math.isfinite(value):
            raise serializers.ValidationError("must be a finite number")
        return value


# ---------------------------------------------------------------- quantities


def max_quantity() -> int:
    return limit("GANGSCHED_MAX_QUANTITY", MAX_QUANTITY)


def max_wait_seconds() -> int:
    return limit("GANGSCHED_MAX_WAIT_SECONDS", MAX_WAIT_SECONDS)


def quantity_error(resource: str, value: Any) -> tuple[int | None, str | None]:
    """The canonical amount of one request, or why it is refused."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None, "must be a quantity string such as 500m or 2Gi, or a number"
    if isinstance(value, float) and not math.isfinite(value):
        return None, "must be a finite number"
    if isinstance(value, str):
        text = value.strip().lower()
        if text.lstrip("+-") in ("nan", "inf", "infinity"):
            return None, f"{value!r} is not a finite quantity"
        if "_" in value:
            return None, f"{value!r}: underscores are not part of the Kubernetes quantity grammar"
        if len(value) > 64:
            return None, "a quantity has at most 64 characters"
    try:
        amount = canonical_amount(resource, value)
    except QuantityError as error:
        return None, str(error)
    cap = max_quantity()
    if amount > cap:
        return None, f"{value!r} is above the limit of {cap} canonical units (milli-CPU, bytes, count)"
    return amount, None


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "example": {"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": 1},
    }
)
class ResourceMapField(serializers.Field):
    """``{"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": 1}``, checked and returned as given:
    the services parse quantities themselves (an integer ``cpu`` there means whole CPUs, so
    handing them canonical milli-CPU would multiply the request by a thousand)."""

    default_error_messages = {"invalid": "must be an object of resource name -> quantity"}

    def to_internal_value(self, data: Any) -> dict[str, str | int | float]:
        if not isinstance(data, dict):
            self.fail("invalid")
        if len(data) > MAX_MAP_ENTRIES:
            raise serializers.ValidationError(f"at most {MAX_MAP_ENTRIES} resources")
        errors = {}
        for resource, value in data.items():
            if qualified_name_error(resource):
                errors[resource] = [f"resource name {NOT_A_QUALIFIED_NAME}"]
                continue
            _amount, error = quantity_error(resource, value)
            if error:
                errors[resource] = [error]
        if errors:
            raise serializers.ValidationError(errors)
        return dict(data)

    def to_representation(self, value: dict) -> dict:
        return value


@extend_schema_field({"type": "object", "additionalProperties": {"type": "string"}})
class StringMapField(serializers.Field):
    """Labels, annotations, node selectors: qualified-name keys -> strings."""

    default_error_messages = {"invalid": "must be an object of string -> string"}

    def __init__(self, max_value_length: int = MAX_LABEL_VALUE, **kwargs):
        self.max_value_length = max_value_length
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[str, str]:
        if not isinstance(data, dict):
            self.fail("invalid")
        if len(data) > MAX_MAP_ENTRIES:
            raise serializers.ValidationError(f"at most {MAX_MAP_ENTRIES} entries")
        errors = {}
        for key, value in data.items():
            if qualified_name_error(key):
                errors[key] = [f"key {NOT_A_QUALIFIED_NAME}"]
            elif not isinstance(value, str):
                errors[key] = ["must be a string"]
            elif len(value) > self.max_value_length:
                errors[key] = [f"at most {self.max_value_length} characters"]
        if errors:
            raise serializers.ValidationError(errors)
        return dict(data)

    def to_representation(self, value: dict) -> dict:
        return value


class TolerationsField(serializers.ListField):
    def __init__(self, **kwargs):
        super().__init__(child=serializers.DictField(), max_length=MAX_MAP_ENTRIES, **kwargs)
        self.validators.append(validate_tolerations)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "array", "items": {"type": "object", "additionalProperties": True}},
            {"type": "object", "additionalProperties": True},
        ]
    }
)
class AffinityField(serializers.Field):
    """Required node affinity: a list of node selector terms, or a pod's whole ``affinity``
    object (its ``nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` is kept)."""

    default_error_messages = {"invalid": "must be a list of node selector terms or an affinity object"}

    def to_internal_value(self, data: Any) -> list:
        if isinstance(data, dict):
            node_affinity = data.get("nodeAffinity") or {}
            required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
            if not isinstance(required, dict):
                self.fail("invalid")
            data = required.get("nodeSelectorTerms", [])
        if not isinstance(data, list):
            self.fail("invalid")
        validate_affinity(data)  # a Django ValidationError: DRF reports it on this field
        return data

    def to_representation(self, value: list) -> list:
        return value
