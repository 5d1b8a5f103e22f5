"""Pages and the CLI show requests as Kubernetes writes them, and exactly: reading the text back
with the parser must give the same canonical integer, or an operator copies a wrong value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_core.engine.quantity import INT64_MAX, canonical_amount, format_quantity

RESOURCES = ["cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "nvidia.com/gpu", "pods"]


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 16000, "16"),
        ("cpu", 500, "500m"),
        ("cpu", 1500, "1500m"),
        ("cpu", 1, "1m"),
        ("cpu", 0, "0"),
        ("memory", 137438953472, "128Gi"),
        ("memory", 512 * 2**20, "512Mi"),
        ("memory", 1536 * 2**20, "1536Mi"),
        ("memory", 2**40, "1Ti"),
        ("memory", 1_500_000_000, "1500M"),
        ("memory", 1000, "1k"),
        ("memory", 1023, "1023"),
        ("memory", 0, "0"),
        ("memory", 2**62, "4Ei"),
        ("ephemeral-storage", 10 * 2**30, "10Gi"),
        ("hugepages-2Mi", 2**21, "2Mi"),
        ("nvidia.com/gpu", 8, "8"),
        ("pods", 110, "110"),
        ("nvidia.com/gpu", 1000, "1000"),  # a count, never "1k"
    ],
)
def test_format_quantity(resource: str, amount: int, text: str) -> None:
    assert format_quantity(resource, amount) == text


@given(resource=st.sampled_from(RESOURCES), amount=st.integers(min_value=0, max_value=INT64_MAX))
def test_format_quantity_reads_back_exactly(resource: str, amount: int) -> None:
    assert canonical_amount(resource, format_quantity(resource, amount)) == amount


@given(
    resource=st.sampled_from(["memory", "ephemeral-storage"]),
    mantissa=st.integers(min_value=1, max_value=1023),
    power=st.integers(min_value=1, max_value=5),
)
def test_whole_binary_units_keep_their_suffix(resource: str, mantissa: int, power: int) -> None:
    """What a user wrote as ``NGi`` comes back as ``NGi`` (or a larger unit when it is whole)."""
    text = format_quantity(resource, mantissa * 1024**power)
    assert text[-2:] in {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
    assert len(text) <= len(f"{mantissa}Gi")


@given(cores=st.integers(min_value=0, max_value=10**6), milli=st.integers(min_value=1, max_value=999))
def test_fractional_cpu_is_written_in_milli(cores: int, milli: int) -> None:
    assert format_quantity("cpu", cores * 1000 + milli) == f"{cores * 1000 + milli}m"
    assert format_quantity("cpu", cores * 1000) == str(cores)
