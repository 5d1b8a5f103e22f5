"""The in-repo copies of the reference manifests never drift from ../shared."""

import pytest

from tests.reference import COPIES, SHARED


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared beside this clone")
def test_the_copies_equal_the_shared_reference_manifests():
    shared = {p.name: p.read_text() for p in SHARED.glob("*.yaml")}
    copies = {p.name: p.read_text() for p in COPIES.glob("*.yaml")}
    assert copies == shared
