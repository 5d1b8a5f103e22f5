"""What pages, charts, the admin and the CLI show for a quantity: the largest binary unit for
bytes, cores for CPU, integers for counts, at most three significant digits; the exact form
(``format_quantity``) stays available wherever the display rounds."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine.quantity import (
    INT64_MAX,
    canonical_amount,
    display_duration,
    display_quantity,
    display_unit,
    format_quantity,
    is_display_exact,
)

GI = 2**30


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("memory", 250000 * 2**20, "244Gi"),
        ("memory", 125000 * 2**20, "122Gi"),
        ("memory", 192 * GI, "192Gi"),
        ("memory", 34359738368, "32Gi"),
        ("memory", 1536 * 2**20, "1.5Gi"),
        ("memory", 1_500_000_000, "1.4Gi"),
        ("memory", 2**20 - 1, "1Mi"),  # 1023.999Ki rounds to the next unit, not to 1024Ki
        ("memory", 1023, "1023"),
        ("memory", 0, "0"),
        ("memory", 2**40, "1Ti"),
        ("memory", 3 * 2**60, "3Ei"),
        ("memory", INT64_MAX, "8Ei"),
        ("ephemeral-storage", 10 * GI, "10Gi"),
        ("hugepages-2Mi", 2**21, "2Mi"),
        ("cpu", 16500, "16.5"),
        ("cpu", 250, "0.25"),
        ("cpu", 1, "0.001"),
        ("cpu", 12345, "12.3"),
        ("cpu", 64000, "64"),
        ("cpu", 1_500_000, "1500"),  # the whole part is never rounded away
        ("cpu", 0, "0"),
        ("cpu", -500, "-0.5"),
        ("nvidia.com/gpu", 8, "8"),
        ("nvidia.com/gpu", 1000, "1000"),
        ("pods", 110, "110"),
    ],
)
def test_display_quantity(resource: str, amount: int, text: str) -> None:
    assert display_quantity(resource, amount) == text


def test_a_forced_unit_keeps_a_chart_in_one_unit() -> None:
    assert display_unit("memory", 250000 * 2**20) == "Gi"
    assert display_quantity("memory", 512 * 2**20, "Gi") == "0.5Gi"
    assert display_quantity("memory", 0, "Gi") == "0"
    assert display_unit("cpu", 16500) == ""


@pytest.mark.parametrize(
    ("resource", "amount", "exact"),
    [
        ("memory", 192 * GI, True),
        ("memory", 250000 * 2**20, False),
        ("cpu", 16500, True),
        ("cpu", 12345, False),
    ],
)
def test_is_display_exact(resource: str, amount: int, exact: bool) -> None:
    assert is_display_exact(resource, amount) is exact
    if exact:
        assert canonical_amount(resource, display_quantity(resource, amount)) == amount
    else:
        assert canonical_amount(resource, format_quantity(resource, amount)) == amount


@given(st.sampled_from(["cpu", "memory", "hugepages-1Gi"]), st.integers(min_value=1, max_value=INT64_MAX))
def test_at_most_three_significant_digits_off_the_whole_part(resource: str, amount: int) -> None:
    text = display_quantity(resource, amount).rstrip("KMGTPEi")
    whole, _, decimals = text.partition(".")
    if decimals:
        assert len((whole + decimals).lstrip("0")) <= 3
    # the displayed figure is within half a unit of its last digit of the true value (read
    # exactly: near 2^63-1 milli-CPU the rounded figure lies past the largest valid quantity)
    shown = _displayed_amount(resource, display_quantity(resource, amount))
    assert abs(shown - amount) <= max(amount, 1000 if resource == "cpu" else 1) * 0.006


def test_the_largest_cpu_amount_displays_rounded_past_the_limit() -> None:
    assert display_quantity("cpu", INT64_MAX) == "9223372036854776"
    assert not is_display_exact("cpu", INT64_MAX)


def _displayed_amount(resource: str, text: str) -> Fraction:
    """The exact amount a displayed figure stands for, in the canonical unit."""
    units = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
    suffix = text[-2:] if text[-2:] in units else ""
    value = Fraction(text[: len(text) - len(suffix)])
    if resource == "cpu":
        return value * 1000
    return value * 1024 ** units.get(suffix, 0)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (0.5, "0.5s"),
        (119, "119s"),
        (600.0, "10min"),
        (630, "10.5min"),
        (3600, "60min"),
        (7200, "2h"),
        (5400 * 2, "3h"),
        (86400, "24h"),
        (None, "-"),
    ],
)
def test_display_duration(seconds, text: str) -> None:
    assert display_duration(seconds) == text
