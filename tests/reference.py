"""Where the reference manifests are.

``../shared/reference/manifests`` beside the repository is the source (developers and CI have
it); ``tests/fixtures/reference_manifests`` holds copies, used only when the repository was
cloned somewhere without ``shared/`` beside it. A test keeps the copies equal to the source.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "reference" / "manifests"
COPIES = ROOT / "tests" / "fixtures" / "reference_manifests"
REFERENCE = SHARED if SHARED.is_dir() else COPIES
