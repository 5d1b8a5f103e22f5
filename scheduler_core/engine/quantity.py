"""Kubernetes resource quantities (``500m``, ``2Gi``, ``1e3``) turned into the engine's integers.

Parsing follows apimachinery's ``resource.ParseQuantity`` so that gangsched never disagrees with
the kubelet or kube-scheduler about what a pod asked for: the same grammar, the same rounding of
values finer than a nano *away from zero* ("if you want some resources, you should get some"), the
same silent cap of binary-suffixed values at 2^63-1. Arithmetic is exact (``Fraction``) because a
float would turn ``0.1 + 0.2`` CPUs into a request one milli-CPU off, and one milli decides whether
a pod fits.

Deliberate differences, all on input no real cluster produces:

- a number needs at least one digit. Go's scanner treats ``"-"``, ``"."`` or ``"Gi"`` as zero; its
  own documented grammar and the OpenAPI pattern for quantities do not, and neither do we;
- a value of 10^1000 or more is refused instead of parsed, so that ``1e999999999`` costs nothing.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from numbers import Integral

__all__ = [
    "QuantityError",
    "canonical_amount",
    "display_duration",
    "display_quantity",
    "format_amount",
    "format_quantity",
    "is_extended_resource",
    "parse_quantity",
    "parse_resources",
]

#: The largest value an int64 holds: Kubernetes' cap for binary quantities, and ours for amounts,
#: which downstream code keeps in int64 numpy arrays.
INT64_MAX = 2**63 - 1

_NANO = 10**9
_MAX_DIGITS = 1000  # refuse magnitudes of 10**_MAX_DIGITS and above (see the module docstring)

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# Sign, integer digits, fraction digits, suffix. A lone "E" is exa, "E3" is an exponent: the
# alternation tries the suffix tables first and falls back to the exponent when digits follow.
_QUANTITY = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")

_SYNTAX = "expected a number with an optional suffix such as 500m, 2Gi, 1e3"

_BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage", "storage"})
_BINARY_UNITS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_UNITS = ("", "k", "M", "G", "T", "P", "E")


class QuantityError(ValueError):
    """A quantity that Kubernetes would reject, or that no node could ever satisfy."""


def _error(value: object, resource: str | None, reason: str) -> QuantityError:
    where = f" for {resource}" if resource is not None else ""
    return QuantityError(f"invalid quantity {value!r}{where}: {reason}")


def _round_up_to_nano(magnitude: Fraction) -> Fraction:
    """Kubernetes keeps nine decimal places and rounds anything finer up, never down to zero."""
    scaled = magnitude * _NANO
    if scaled.denominator == 1:
        return magnitude
    return Fraction(math.ceil(scaled), _NANO)


def _parse_text(text: str, value: object, resource: str | None) -> Fraction:
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise _error(value, resource, _SYNTAX)
    sign, whole, fraction, suffix = match.group(1), match.group(2), match.group(3) or "", match.group(4) or ""
    if not whole and not fraction:
        raise _error(value, resource, _SYNTAX)
    try:
        mantissa = int(whole + fraction or "0")
    except ValueError:  # more digits than Python converts by default: nobody means that
        raise _error(value, resource, "too many digits") from None

    if suffix in _BINARY_SUFFIXES:
        magnitude = _round_up_to_nano(Fraction(mantissa << _BINARY_SUFFIXES[suffix], 10 ** len(fraction)))
        magnitude = min(magnitude, Fraction(INT64_MAX))  # Kubernetes' silent cap, as in "8Ei"
    else:
        if suffix in _DECIMAL_SUFFIXES:
            exponent = _DECIMAL_SUFFIXES[suffix]
        else:
            digits = suffix[1:].lstrip("+-").lstrip("0")
            if len(digits) > 19:  # Go's ParseInt(…, 10, 64) fails beyond int64
                raise _error(value, resource, "exponent out of range")
            exponent = int(suffix[1:])
            if not -(2**63) <= exponent <= INT64_MAX:
                raise _error(value, resource, "exponent out of range")
        scale = exponent - len(fraction)
        if mantissa == 0:
            magnitude = Fraction(0)
        elif len(str(mantissa)) + scale > _MAX_DIGITS:
            raise _error(value, resource, f"out of range (at least 10^{_MAX_DIGITS})")
        elif scale >= 0:
            magnitude = Fraction(mantissa * 10**scale)
        elif -scale - 9 > len(str(mantissa)):
            magnitude = Fraction(1, _NANO)  # far below a nano: rounds up without a giant power of ten
        else:
            magnitude = _round_up_to_nano(Fraction(mantissa, 10**-scale))
    return -magnitude if sign == "-" else magnitude


def _parse(value: str | int | float, resource: str | None) -> Fraction:
    if isinstance(value, bool):  # a YAML ``true`` where a quantity belongs is a mistake, not 1
        raise _error(value, resource, _SYNTAX)
    if isinstance(value, Integral):
        return Fraction(int(value))
    if isinstance(value, float):
        # YAML turns ``cpu: 0.5`` into a float; its shortest repr is what the user typed.
        return _parse_text(str(value), value, resource)
    if isinstance(value, str):
        return _parse_text(value, value, resource)
    raise _error(value, resource, _SYNTAX)


def parse_quantity(text: str | int | float) -> Fraction:
    """The exact value of a Kubernetes quantity; ``QuantityError`` names the value when invalid."""
    return _parse(text, None)


def is_extended_resource(resource: str) -> bool:
    """Kubernetes' IsExtendedResourceName: a domain-qualified name outside ``kubernetes.io``.

    Like Kubernetes, any name *containing* ``kubernetes.io/`` is native; ``hugepages-2Mi`` has no
    domain and is native too; ``requests.*`` names are quota keys, not resources.
    """
    return "/" in resource and "kubernetes.io/" not in resource and not resource.startswith("requests.")


def canonical_amount(resource: str, text: str | int | float) -> int:
    """The engine's integer for a request: milli-CPU for ``cpu``, the plain value otherwise.

    Rounding is up, as Kubernetes' MilliValue and Value do, so ``0.1m`` of CPU costs one milli and
    a pod is never placed on a node that the kubelet would then find too small.

    Remembered per (resource, value, its type): every pod of a job asks the same few questions,
    and parsing a quantity into a Fraction was 7% of an API submission. Refusals are not kept.
    """
    if isinstance(resource, str) and type(text) in (str, int, float):  # hashable, not a bool
        return _canonical_amount_kept(resource, text)
    return _canonical_amount(resource, text)


def _canonical_amount(resource: str, text: str | int | float) -> int:
    value = _parse(text, resource)
    if value < 0:
        raise _error(text, resource, "must not be negative")
    if value.denominator != 1 and is_extended_resource(resource):
        raise _error(text, resource, "extended resources must be whole numbers")
    amount = math.ceil(value * 1000) if resource == "cpu" else math.ceil(value)
    if amount > INT64_MAX:
        unit = "milli-CPU" if resource == "cpu" else "units"
        raise _error(text, resource, f"too large (the maximum is 2^63-1 {unit})")
    return amount


_canonical_amount_kept = functools.lru_cache(maxsize=4096, typed=True)(_canonical_amount)


def parse_resources(mapping: Mapping[str, str | int | float] | None) -> dict[str, int]:
    """A pod's or node's resource list as canonical integers; errors name the resource and value."""
    if not mapping:
        return {}
    return {resource: canonical_amount(resource, text) for resource, text in mapping.items()}


def _is_bytes(resource: str) -> bool:
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


def _format_milli(amount: int) -> str:
    if amount % 1000 == 0:
        return str(amount // 1000)
    if amount < 1000:
        return f"{amount}m"
    whole, milli = divmod(amount, 1000)
    return f"{whole}.{milli:03d}".rstrip("0")


def _format_bytes(amount: int) -> str:
    """Binary units; a whole number means exact, one decimal means rounded (``1.0Gi`` is 1Gi+1)."""
    if amount < 1024:
        return str(amount)
    power = min((amount.bit_length() - 1) // 10, len(_BINARY_UNITS) - 1)
    unit = 1024**power
    if amount % unit == 0:
        return f"{amount // unit}{_BINARY_UNITS[power]}"
    tenths = round(Fraction(amount * 10, unit))
    if tenths >= 10240 and power < len(_BINARY_UNITS) - 1:  # 1023.96Mi reads better as 1.0Gi
        power += 1
        tenths = round(Fraction(amount * 10, 1024**power))
    return f"{tenths // 10}.{tenths % 10}{_BINARY_UNITS[power]}"


def format_amount(resource: str, amount: int) -> str:
    """A canonical amount in the form an operator would write it, for explanations."""
    sign, magnitude = ("-", -amount) if amount < 0 else ("", amount)
    if resource == "cpu":
        return sign + _format_milli(magnitude)
    if _is_bytes(resource):
        return sign + _format_bytes(magnitude)
    return sign + str(magnitude)


def _exact_units(amount: int, base: int, units: tuple[str, ...]) -> str:
    """``amount`` with the largest of ``units`` (powers of ``base``) that divides it exactly."""
    power = 0
    while power < len(units) - 1 and amount % base ** (power + 1) == 0:
        power += 1
    return f"{amount // base**power}{units[power]}"


def format_quantity(resource: str, amount: int) -> str:
    """A canonical amount written back as Kubernetes writes it, exactly (``canonical_amount``
    of the result is ``amount``): what pages and the CLI show, where ``format_amount`` rounds.

    CPU in whole cores when it is whole (``16``), else in milli-CPU (``500m``, ``1500m``), as
    Kubernetes' canonical form has it; bytes with the largest binary suffix that is exact
    (``128Gi``), else the largest exact decimal one (``1500M``), as Kubernetes canonicalizes a
    binary quantity that is no multiple of 1024; any other resource as a plain integer.
    """
    sign, magnitude = ("-", -amount) if amount < 0 else ("", amount)
    if resource == "cpu":
        text = str(magnitude // 1000) if magnitude % 1000 == 0 else f"{magnitude}m"
    elif _is_bytes(resource) and magnitude:
        if magnitude % 1024 == 0:
            text = _exact_units(magnitude, 1024, _BINARY_UNITS)
        else:
            text = _exact_units(magnitude, 1000, _DECIMAL_UNITS)
    else:
        text = str(magnitude)
    return sign + text


#: Significant digits a displayed figure keeps (``244Gi``, ``16.5``, ``0.25``).
DISPLAY_DIGITS = 3


def _significant(value: Fraction) -> str:
    """``value`` (>= 0) with at most ``DISPLAY_DIGITS`` significant digits, never dropping a digit
    of its whole part (``1500``, ``16.5``, ``0.25``, ``0.001``), trailing zeros removed."""
    if value == 0:
        return "0"
    whole_digits = len(str(math.floor(value))) if value >= 1 else 0
    if value >= 1:
        decimals = max(DISPLAY_DIGITS - whole_digits, 0)
    else:  # 0.0125: three digits after the leading zeros
        decimals, probe = DISPLAY_DIGITS, value * 10
        while probe < 1:
            decimals, probe = decimals + 1, probe * 10
    scaled = round(value * 10**decimals)  # half to even, on the exact value
    whole, rest = divmod(scaled, 10**decimals)
    if not decimals or not rest:
        return str(whole)
    return f"{whole}.{rest:0{decimals}d}".rstrip("0")


def display_unit(resource: str, amount: int) -> str:
    """The unit ``display_quantity`` shows ``amount`` of ``resource`` in: ``Ki`` … ``Ei`` (or
    ``""`` under 1Ki) for bytes, ``""`` (cores, or a count) otherwise. A chart picks the unit of
    its largest figure and writes every label of it in that unit."""
    if not _is_bytes(resource):
        return ""
    magnitude = abs(int(amount))
    power = 0
    while power < len(_BINARY_UNITS) - 1 and magnitude >= 1024 ** (power + 1):
        power += 1
    # 1023.9Mi would read 1024Mi: show it as 1Gi.
    if power < len(_BINARY_UNITS) - 1 and round(Fraction(magnitude, 1024**power)) >= 1024:
        power += 1
    return _BINARY_UNITS[power]


def display_quantity(resource: str, amount: int, unit: str | None = None) -> str:
    """A canonical amount as people read it on pages, charts, the admin and the CLI; rounded,
    where ``format_quantity`` is exact (show that one on hover, keep it in JSON).

    - bytes (memory, storage, hugepages) in the largest binary unit the amount reaches
      (``Ki`` … ``Ei``), at most three significant digits: 250000Mi is ``244Gi``, 1.5Gi ``1.5Gi``;
      under 1Ki the plain number of bytes;
    - CPU in cores, at most three significant digits: 16500m is ``16.5``, 250m ``0.25``;
    - any other resource is a count: the integer.

    The whole part is never rounded away (1500 cores is ``1500``). ``unit`` forces a binary unit
    for bytes (a chart's axis and legend share one, see ``display_unit``).
    """
    amount = int(amount)
    sign, magnitude = ("-", -amount) if amount < 0 else ("", amount)
    if resource == "cpu":
        return sign + _significant(Fraction(magnitude, 1000))
    if not _is_bytes(resource):
        return sign + str(magnitude)
    unit = display_unit(resource, magnitude) if unit is None else unit
    text = _significant(Fraction(magnitude, 1024 ** _BINARY_UNITS.index(unit)))
    return sign + text + (unit if text != "0" else "")


def is_display_exact(resource: str, amount: int) -> bool:
    """Whether ``display_quantity`` shows ``amount`` without rounding (then a hover adds nothing)."""
    try:
        return canonical_amount(resource, display_quantity(resource, amount).lstrip("-")) == abs(int(amount))
    except QuantityError:
        return False


def display_duration(seconds: float | int | None) -> str:
    """A duration as people read it, with its unit: ``45s`` under two minutes, ``10min`` or
    ``10.5min`` under two hours, ``1.5h`` beyond (three significant digits); ``-`` for none."""
    if seconds is None:
        return "-"
    value = Fraction(str(seconds)) if isinstance(seconds, float) else Fraction(seconds)
    sign, value = ("-", -value) if value < 0 else ("", value)
    if value < 120:
        return f"{sign}{_significant(value)}s"
    if value < 7200:
        return f"{sign}{_significant(value / 60)}min"
    return f"{sign}{_significant(value / 3600)}h"
