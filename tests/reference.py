"""Where the reference manifests are: ``tests/fixtures/reference_manifests``, in the repository.

They are copies of the developers' ``shared/reference/manifests``, kept beside the repository (one
example per declaration style). The tests read the copies on every machine, so a clone of the
repository alone runs the same tests as CI; ``tests/service/test_reference_copies.py`` keeps the
copies equal to the source where it is beside the clone.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "fixtures" / "reference_manifests"
