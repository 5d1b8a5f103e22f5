"""The checks every format shares; each failure is a DeclarationError naming the field.

Values come from YAML or JSON written by people, so nothing is taken on trust: integers must be
integers (not ``true``, ``4.0`` or ``"1_000"``), quantities follow Kubernetes' grammar
(``engine/quantity.py``, which refuses ``NaN``, ``Infinity``, ``1_000`` and ``1e999999999``
where ``Decimal`` would accept them), and every number has a ceiling so that one manifest cannot
make the engine's int64 arithmetic overflow or a gang wait forever by accident.

Limits (settings, read with getattr so each has a default):

- ``GANGSCHED_MAX_MANIFEST_BYTES`` (1 MiB): the body of one apply;
- ``GANGSCHED_MAX_GANG_MEMBERS`` (10,000): minMember, total-number, replicas, pods per apply;
- ``GANGSCHED_MAX_WAIT_SECONDS`` (7 days): any wait time or timeout;
- ``GANGSCHED_MAX_QUANTITY`` (2^48 canonical units per resource and pod): a member count times
  this still fits in int64, which the engine's numpy sums use.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from scheduler_core.engine.model import GangMode, Placement, TimeoutStyle
from scheduler_core.engine.quantity import QuantityError, canonical_amount
from scheduler_core.models import RestartPolicy
from scheduler_core.specs.errors import DeclarationError, join
from scheduler_core.validators import INT64_MAX, INT64_MIN

MAX_MANIFEST_BYTES = 1024 * 1024
MAX_GANG_MEMBERS = 10_000
MAX_WAIT_SECONDS = 7 * 24 * 3600
MAX_QUANTITY = 2**48
MAX_GROUP_GANGS = 100
#: Kubernetes' integers (and Go's strconv.ParseInt): no number of a manifest may leave this range.

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DIGITS = re.compile(r"[+-]?[0-9]{1,19}")
_DECIMAL = re.compile(r"[0-9]{1,12}(\.[0-9]{1,9})?")
# Go's time.ParseDuration, as Koordinator reads waiting-time: "300s", "1h30m", "1.5h".
_DURATION_PART = re.compile(r"([0-9]{1,12}(?:\.[0-9]{1,9})?)(ns|us|µs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def limit(name: str, default: int) -> int:
    return getattr(settings, name, default)


def kind_of(value: Any) -> str:
    """What a value is, in the words of JSON and YAML (not Python's class names)."""
    if value is None:
        return "null"
    for kind, name in _KINDS:
        if isinstance(value, kind):
            return name
    return "a value JSON does not have"


_KINDS = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"))
_KINDS += ((list, "a list"), (dict, "an object"), (bytes, "binary data (!!binary)"), (set, "a set (!!set)"))
_KINDS += ((datetime.date, "a date (!!timestamp)"),)


def shown(value: Any) -> str:
    """A value for a message: strings quoted, numbers and booleans as written in JSON, anything
    else by its kind (a message never carries a Python repr such as ``None`` or ``{'a': 1}``)."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("-" if value < 0 else "") + "Infinity"
    if isinstance(value, int | float):
        return str(value)
    return kind_of(value)


# ---------------------------------------------------------------- shapes


def mapping(value: Any, field: str, *, optional: bool = True) -> dict:
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise DeclarationError(field, f"must be an object, not {kind_of(value)}")
    return value


def sequence(value: Any, field: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise DeclarationError(field, f"must be a list, not {kind_of(value)}")
    return value


def string_map(value: Any, field: str) -> dict[str, str]:
    """Labels, annotations, node selectors: Kubernetes refuses a non-string value, so do we."""
    for key, item in mapping(value, field).items():
        if not isinstance(key, str):
            raise DeclarationError(
                join(field, str(key)), f"a key must be a string (quote it in YAML), not {kind_of(key)}"
            )
        if not isinstance(item, str):
            raise DeclarationError(
                join(field, key), f"must be a string (quote it in YAML), not {kind_of(item)}"
            )
    return dict(mapping(value, field))


def text(value: Any, field: str, *, max_length: int = 253) -> str:
    if not isinstance(value, str) or not value:
        raise DeclarationError(field, "must be a non-empty string")
    if len(value) > max_length:
        raise DeclarationError(field, f"must be at most {max_length} characters, not {len(value)}")
    return value


# ---------------------------------------------------------------- names (RFC 1123)


def dns_label(value: Any, field: str) -> str:
    """A namespace (or a label-like name): at most 63 lowercase letters, digits and '-'."""
    value = text(value, field, max_length=63)
    if not _DNS_LABEL.fullmatch(value):
        raise DeclarationError(
            field,
            f"{value!r} is not a valid RFC 1123 label: lowercase letters, digits and '-', "
            "starting and ending with a letter or digit",
        )
    return value


def dns_subdomain(value: Any, field: str) -> str:
    """An object name: at most 253 characters, dot-separated RFC 1123 labels of at most 63."""
    value = text(value, field, max_length=253)
    for part in value.split("."):
        if len(part) > 63:
            raise DeclarationError(field, f"{value!r}: each dot-separated part must be at most 63 characters")
        if not _DNS_LABEL.fullmatch(part):
            raise DeclarationError(
                field,
                f"{value!r} is not a valid RFC 1123 name: lowercase letters, digits, '-' and '.', "
                "starting and ending with a letter or digit",
            )
    return value


def gang_key(value: Any, field: str) -> tuple[str, str]:
    """A Koordinator gang-group member: ``namespace/name``."""
    if not isinstance(value, str) or value.count("/") != 1:
        raise DeclarationError(field, f"{shown(value)} must be a namespace/name string")
    namespace, name = value.split("/")
    return dns_label(namespace, field), dns_subdomain(name, field)


# ---------------------------------------------------------------- numbers


def integer(value: Any, field: str, *, minimum: int, maximum: int, text_ok: bool = False) -> int:
    """An integer field (a YAML/JSON number) or, with ``text_ok``, an annotation (a string of
    ASCII digits).

    ``int()`` would also take ``"1_000"``, ``" 7"`` and non-ASCII digits; Go's strconv.Atoi,
    which the reference schedulers use, takes none of them, and neither do we.
    """
    if isinstance(value, str) and not text_ok:
        raise DeclarationError(field, f"must be an integer, not the string {value!r}")
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
            raise DeclarationError(field, f"{value!r} is not an integer")
        value = int(value)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise DeclarationError(field, f"must be an integer, not {shown(value)}")
    if not minimum <= value <= maximum:
        raise DeclarationError(field, f"{value} is out of range: must be between {minimum} and {maximum}")
    return value


def member_count(value: Any, field: str, *, minimum: int = 1, text_ok: bool = False) -> int:
    maximum = limit("GANGSCHED_MAX_GANG_MEMBERS", MAX_GANG_MEMBERS)
    return integer(value, field, minimum=minimum, maximum=maximum, text_ok=text_ok)


def min_available(value: Any, field: str, total: int) -> int:
    """A job's ``minAvailable``: how many of its ``total`` pods start it (all when None)."""
    count = member_count(total if value is None else value, field)
    if count > total:
        raise DeclarationError(field, f"{count} is more than the job's {total} pods")
    return count


def wait_seconds(value: Any, field: str, *, duration: bool = False, text_ok: bool = False) -> float:
    """A timeout: whole seconds (an int, or its string), or with ``duration`` a Go duration
    string such as ``300s`` or ``1h30m``; positive and at most GANGSCHED_MAX_WAIT_SECONDS."""
    maximum = limit("GANGSCHED_MAX_WAIT_SECONDS", MAX_WAIT_SECONDS)
    if duration and isinstance(value, str) and not _DIGITS.fullmatch(value):
        seconds = _go_duration(value, field)
    else:
        seconds = integer(value, field, minimum=INT64_MIN, maximum=INT64_MAX, text_ok=text_ok or duration)
    if not 0 < seconds <= maximum:
        raise DeclarationError(
            field, f"{shown(value)} is out of range: must be positive and at most {maximum}s"
        )
    return float(seconds)


def _go_duration(value: str, field: str) -> float:
    position, seconds = 0, 0.0
    while position < len(value):
        match = _DURATION_PART.match(value, position)
        if match is None:
            raise DeclarationError(field, f"{value!r} is not a duration such as 300s, 5m or 1h30m")
        seconds += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if not value:
        raise DeclarationError(field, "must not be empty")
    return seconds


def non_negative_seconds(value: Any, field: str) -> float:
    """A declared run time (``gangsched.io/duration-seconds``): a plain decimal, e.g. ``90.5``."""
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
        raise DeclarationError(field, f"{shown(value)} must be a non-negative decimal number of seconds")
    seconds = float(value)
    maximum = 10 * limit("GANGSCHED_MAX_WAIT_SECONDS", MAX_WAIT_SECONDS)
    if not math.isfinite(seconds) or seconds > maximum:
        raise DeclarationError(field, f"{value!r} is out of range: at most {maximum}s")
    return seconds


def resources(value: Any, field: str) -> dict[str, int]:
    """A ResourceList as canonical integers; each error names the resource's own path."""
    result = {}
    cap = limit("GANGSCHED_MAX_QUANTITY", MAX_QUANTITY)
    for resource, amount in mapping(value, field).items():
        where = join(field, str(resource))
        if not isinstance(resource, str) or not resource:
            raise DeclarationError(where, "a resource name must be a non-empty string")
        if isinstance(amount, bool) or not isinstance(amount, str | int | float):
            raise DeclarationError(
                where, f"must be a quantity such as '500m' or '2Gi', not {kind_of(amount)}"
            )
        if isinstance(amount, float) and not math.isfinite(amount):
            raise DeclarationError(where, f"must be a finite quantity, not {shown(amount)}")
        try:
            result[resource] = canonical_amount(resource, amount)
        except QuantityError as error:
            raise DeclarationError(where, str(error)) from None
        if result[resource] > cap:
            raise DeclarationError(where, f"{shown(amount)} is too large (at most {cap} canonical units)")
    return result


def resources_add(total: dict[str, int], more: Mapping[str, int], field: str) -> None:
    cap = limit("GANGSCHED_MAX_QUANTITY", MAX_QUANTITY)
    for resource, amount in more.items():
        total[resource] = total.get(resource, 0) + amount
        if total[resource] > cap:
            raise DeclarationError(
                join(field, resource), f"the total is too large (at most {cap} canonical units)"
            )


# ---------------------------------------------------------------- enumerations


def choice(value: Any, field: str, allowed: list[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise DeclarationError(field, f"{shown(value)} is not one of {', '.join(allowed)}")
    return value


def mode(value: Any, field: str) -> str:
    return choice(value, field, [m.value for m in GangMode])


def style(value: Any, field: str) -> str:
    return choice(value, field, [s.value for s in TimeoutStyle])


def placement(value: Any, field: str) -> str:
    return choice(value, field, [p.value for p in Placement])


def restart_policy(value: Any, field: str) -> str:
    return choice(value, field, list(RestartPolicy.values))
