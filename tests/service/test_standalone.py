"""The repository stands alone: a user clones only it, without the developers' ``shared/`` beside it.

Every file the code, the tests, the benchmarks and the scripts read is in the repository (traces:
``traces/``; reference manifests: ``tests/fixtures/``), so no tracked file may name ``../shared`` or
build a path from ``"shared"``. The two exceptions check the in-repo copies against their source
and skip where it is absent. README.md and docs/ may tell developers about it.
"""

import re
import subprocess

from tests.reference import ROOT

#: The drift checks of the copies, and this file (whose patterns name it).
ALLOWED = {
    "tests/service/test_reference_copies.py",
    "tests/simulation/test_trace_files.py",
    "tests/service/test_standalone.py",
}
#: ../shared and /work/shared, a "shared" path component, a "shared/..." path.
OUTSIDE = re.compile(r"\.\./shared\b|/work/shared\b|[\"']shared[\"']|[\"']shared/")


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return listed.stdout.splitlines()


def test_no_tracked_file_reads_anything_beside_the_repository():
    offending = []
    for name in tracked_files():
        if name in ALLOWED or name == "README.md" or name.startswith("docs/"):
            continue
        path = ROOT / name
        if not path.is_file() or path.suffix in {".png", ".csv"}:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            if OUTSIDE.search(line):
                offending.append(f"{name}:{number}: {line.strip()}")
    assert offending == []


def test_the_pattern_finds_the_ways_a_path_to_shared_is_written():
    for line in (
        'TRACE = ROOT.parent / "shared" / "traces"',
        "ROOT.parent / 'shared/traces/x.csv'",
        "TRACES=${TRACES:-../shared/traces}",
        'SHARED = "/work/shared/traces/tiresias-60-jobs.csv"',
    ):
        assert OUTSIDE.search(line), line
    for line in ("from celery import shared_task", "from scheduler_core import selectors as shared"):
        assert not OUTSIDE.search(line), line
