"""Quantities must read exactly as Kubernetes reads them, or gangsched and the kubelet disagree on fit."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine.quantity import (
    INT64_MAX,
    QuantityError,
    canonical_amount,
    format_amount,
    is_extended_resource,
    parse_quantity,
    parse_resources,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500m", Fraction(1, 2)),
        ("2", Fraction(2)),
        ("1.5", Fraction(3, 2)),
        ("2Gi", Fraction(2 * 2**30)),
        ("512M", Fraction(512_000_000)),
        ("1e3", Fraction(1000)),
        ("100Ki", Fraction(102_400)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("12E-3", Fraction(12, 1000)),
        ("+1", Fraction(1)),
        (".5", Fraction(1, 2)),
        ("1.", Fraction(1)),
        ("0", Fraction(0)),
        ("-0", Fraction(0)),
        ("-1", Fraction(-1)),
        ("1E", Fraction(10**18)),
        ("1e+3", Fraction(1000)),
        ("250u", Fraction(250, 10**6)),
        ("3n", Fraction(3, 10**9)),
        ("0.1n", Fraction(1, 10**9)),  # finer than nano rounds up, never to zero
        ("-0.1n", Fraction(-1, 10**9)),  # ... away from zero for negatives
        ("1e-30", Fraction(1, 10**9)),
        ("8Ei", Fraction(INT64_MAX)),  # Kubernetes caps binary quantities at 2^63-1
        ("10E", Fraction(10**19)),  # ... but not decimal ones
        (5, Fraction(5)),
        (0.5, Fraction(1, 2)),
        (1e-05, Fraction(1, 100_000)),
    ],
    ids=str,
)
def test_parse_quantity(text: str | int | float, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


_INVALID = (
    # unknown suffixes, including near misses of real ones
    *("2GiB", "1K", "1ki", "1e", "1m3", "1E1i"),
    # malformed numbers and exponents
    *("abc", "", "1.2.3", "--1", "1e3.5", "1e--3", "e3", "nan", "١"),
    # whitespace anywhere
    *("1 Gi", " 1", "1\n"),
    # no digit at all: Go's scanner reads these as zero, the documented grammar does not
    *("Gi", "-", "."),
    # not quantities at all
    *(True, None, float("inf")),
)


@pytest.mark.parametrize("text", _INVALID, ids=repr)
def test_parse_quantity_rejects(text: object) -> None:
    with pytest.raises(QuantityError, match="invalid quantity"):
        parse_quantity(text)  # type: ignore[arg-type]


def test_error_names_the_value() -> None:
    with pytest.raises(QuantityError) as raised:
        parse_quantity("2GiB")
    assert str(raised.value) == (
        "invalid quantity '2GiB': expected a number with an optional suffix such as 500m, 2Gi, 1e3"
    )


def test_hostile_exponents_are_cheap() -> None:
    with pytest.raises(QuantityError, match="out of range"):
        parse_quantity("1e999999999")
    with pytest.raises(QuantityError, match="exponent out of range"):
        parse_quantity("1e99999999999999999999")
    assert parse_quantity("1e-999999999") == Fraction(1, 10**9)


@pytest.mark.parametrize(
    ("resource", "text", "expected"),
    [
        ("cpu", "500m", 500),
        ("cpu", "2", 2000),
        ("cpu", "1.5", 1500),
        ("cpu", "0.1m", 1),
        ("cpu", "12E-3", 12),
        ("cpu", ".5", 500),
        ("cpu", "+1", 1000),
        ("cpu", "1e3", 1_000_000),
        ("cpu", 0.25, 250),
        ("cpu", 4, 4000),
        ("memory", "2Gi", 2_147_483_648),
        ("memory", "512M", 512_000_000),
        ("memory", "100Ki", 102_400),
        ("memory", "1.5Gi", 1_610_612_736),
        ("memory", "1e3", 1000),
        ("memory", "500m", 1),  # Value() rounds up
        ("memory", "-0", 0),
        ("ephemeral-storage", "10G", 10_000_000_000),
        ("hugepages-2Mi", "0.5", 1),  # hugepages are native, so fractions are rounded, not refused
        ("nvidia.com/gpu", "2", 2),
        ("nvidia.com/gpu", "1e1", 10),
        ("pods", "110", 110),
    ],
    ids=str,
)
def test_canonical_amount(resource: str, text: str | int | float, expected: int) -> None:
    assert canonical_amount(resource, text) == expected


@pytest.mark.parametrize(
    ("resource", "text", "message"),
    [
        pytest.param(resource, text, message, id=f"{resource} {text}")
        for resource, text, message in [
            ("memory", "-1", "invalid quantity '-1' for memory: must not be negative"),
            ("cpu", "-100m", "invalid quantity '-100m' for cpu: must not be negative"),
            (
                "nvidia.com/gpu",
                "1.5",
                "invalid quantity '1.5' for nvidia.com/gpu: extended resources must be whole numbers",
            ),
            ("example.com/foo", "500m", "invalid quantity '500m' for example.com/foo: extended resources"),
            ("memory", "2GiB", "invalid quantity '2GiB' for memory: expected a number"),
            ("memory", "10E", "invalid quantity '10E' for memory: too large"),
            ("cpu", "1e16", "invalid quantity '1e16' for cpu: too large"),
        ]
    ],
)
def test_canonical_amount_rejects(resource: str, text: str, message: str) -> None:
    with pytest.raises(QuantityError) as raised:
        canonical_amount(resource, text)
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize(
    ("resource", "extended"),
    [
        ("nvidia.com/gpu", True),
        ("example.com/foo", True),
        ("cpu", False),
        ("hugepages-1Gi", False),
        ("kubernetes.io/batch-cpu", False),
        ("requests.nvidia.com/gpu", False),
    ],
    ids=str,
)
def test_is_extended_resource(resource: str, extended: bool) -> None:
    assert is_extended_resource(resource) is extended


def test_parse_resources() -> None:
    assert parse_resources({"cpu": "500m", "memory": "2Gi", "nvidia.com/gpu": 1}) == {
        "cpu": 500,
        "memory": 2_147_483_648,
        "nvidia.com/gpu": 1,
    }
    assert parse_resources(None) == {}
    assert parse_resources({}) == {}
    with pytest.raises(QuantityError, match=r"invalid quantity '1 Gi' for memory"):
        parse_resources({"cpu": "1", "memory": "1 Gi"})


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 4000, "4"),
        ("cpu", 500, "500m"),
        ("cpu", 1500, "1.5"),
        ("cpu", 1250, "1.25"),
        ("cpu", 0, "0"),
        ("cpu", -500, "-500m"),
        ("memory", 2 * 2**30, "2Gi"),
        ("memory", 512 * 2**20, "512Mi"),
        ("memory", 3 * 2**29, "1.5Gi"),
        ("memory", 2**30 + 1, "1.0Gi"),  # one decimal marks a rounded value
        ("memory", 2**30 - 1, "1.0Gi"),  # 1023.99...Mi reads as 1.0Gi, not 1024.0Mi
        ("memory", 512_000_000, "488.3Mi"),
        ("memory", 1000, "1000"),
        ("memory", 0, "0"),
        ("ephemeral-storage", 10 * 2**40, "10Ti"),
        ("hugepages-2Mi", 4 * 2**20, "4Mi"),
        ("nvidia.com/gpu", 8, "8"),
        ("pods", 110, "110"),
    ],
    ids=str,
)
def test_format_amount(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text


@pytest.mark.parametrize("resource", ["cpu", "memory"])
@pytest.mark.parametrize("amount", [1, 999, 1000, 1024, 1536, 2**20, 2**30, 5 * 2**40])
def test_exact_formats_read_back(resource: str, amount: int) -> None:
    text = format_amount(resource, amount)
    if "." not in text or resource == "cpu":
        assert canonical_amount(resource, text) == amount


_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENTS = {"e0": 0, "e3": 3, "E-2": -2, "e+5": 5, "E12": 12, "e-9": -9, "e-0": 0}
_SUFFIXES = {
    **{suffix: Fraction(10) ** power for suffix, power in {**_DECIMAL, **_EXPONENTS}.items()},
    **{suffix: Fraction(2) ** power for suffix, power in _BINARY.items()},
}


@given(n=st.integers(min_value=-(10**12), max_value=10**12), suffix=st.sampled_from(sorted(_SUFFIXES)))
def test_integer_with_suffix_is_exact(n: int, suffix: str) -> None:
    expected = n * _SUFFIXES[suffix]
    if suffix.endswith("i") and abs(expected) > INT64_MAX:
        expected = INT64_MAX if n > 0 else -INT64_MAX  # Kubernetes' binary cap
    assert parse_quantity(f"{n}{suffix}") == expected


@given(st.decimals(allow_nan=False, allow_infinity=False, places=9, min_value=-(10**9), max_value=10**9))
def test_decimal_numbers_are_exact(value: Decimal) -> None:
    assert parse_quantity(format(value, "f")) == Fraction(value)


@given(st.integers(min_value=0, max_value=10**15))
def test_cpu_cores_and_milli_agree(milli: int) -> None:
    assert canonical_amount("cpu", f"{milli}m") == milli
    assert canonical_amount("cpu", format_amount("cpu", milli)) == milli


def test_remembered_answers_keep_every_refusal():
    """canonical_amount remembers answers per value and type: a bool after the int it equals is
    still refused, an unhashable value still gets a QuantityError, and refusals are asked anew."""
    assert canonical_amount("cpu", 1) == 1000
    assert canonical_amount("cpu", 1) == 1000
    for bad in (True, [1], {"cpu": 1}, "1x", -1):
        for _ in range(2):
            with pytest.raises(QuantityError):
                canonical_amount("cpu", bad)
    assert canonical_amount("nvidia.com/gpu", "2") == 2
    with pytest.raises(QuantityError):
        canonical_amount("nvidia.com/gpu", "0.5")  # the same text is fine for cpu, not for a GPU
    assert canonical_amount("cpu", "0.5") == 500
