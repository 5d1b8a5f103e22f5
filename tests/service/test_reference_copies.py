"""The in-repo copies of the reference manifests never drift from ../shared."""

import pytest

from tests.reference import REFERENCE, ROOT

SOURCE = ROOT.parent / "shared" / "reference" / "manifests"


@pytest.mark.skipif(not SOURCE.is_dir(), reason="no ../shared beside this clone")
def test_the_copies_equal_the_shared_reference_manifests():
    shared = {p.name: p.read_text() for p in SOURCE.glob("*.yaml")}
    copies = {p.name: p.read_text() for p in REFERENCE.glob("*.yaml")}
    assert copies == shared
