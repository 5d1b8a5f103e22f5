"""bench/soak.py and bench/stateful.py: each run on a test database of its own.

pytest-django drops and creates the test database it is given; two runs sharing a name dropped
each other's. Each run now adds a suffix of its own to the name it is given (or to its default),
so a given name is never dropped and two runs never share a database.
"""

import importlib.util
import subprocess
import sys
import types
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def load(name: str):
    sys.path.insert(0, str(BENCH))  # the scripts import faults_run from their own folder
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_a_run_never_uses_the_name_it_is_given_and_two_runs_never_share_one(monkeypatch):
    faults_run = load("faults_run")
    monkeypatch.setenv("GANGSCHED_TEST_DB", "test_mine")
    names = {faults_run.run_database("test_gs_soak") for _ in range(50)}
    assert len(names) == 50
    assert all(name.startswith("test_mine_") and name != "test_mine" for name in names)
    monkeypatch.delenv("GANGSCHED_TEST_DB")
    assert faults_run.run_database("test_gs_soak").startswith("test_gs_soak_")
    monkeypatch.setenv("GANGSCHED_TEST_DB", "x" * 80)
    assert len(faults_run.run_database("test_gs_soak")) == faults_run.MAX_NAME


def test_two_processes_get_different_names():
    code = (
        f"import sys; sys.path.insert(0, {str(BENCH)!r}); import faults_run as f; print(f.run_database('t'))"
    )
    names = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert names[0] != names[1]


@pytest.mark.parametrize(
    ("script", "base", "modules"),
    [
        ("soak", "test_gs_soak", ("tests.faults.test_kills", "tests.faults.test_lease_handover")),
        ("stateful", "test_gs_stateful", ("tests.faults.stateful",)),
    ],
)
def test_each_script_runs_its_tests_on_a_database_of_its_own(monkeypatch, tmp_path, script, base, modules):
    module = load(script)
    monkeypatch.setenv("GANGSCHED_TEST_DB", "test_given")
    seen = {}

    def run_tests(tests, env):
        seen.update(env)
        return 0, 0.0

    monkeypatch.setattr(module, "run_tests", run_tests)
    for name in modules:  # what the tests would have recorded
        monkeypatch.setitem(sys.modules, name, types.SimpleNamespace(FIGURES={}, STATS={}))
    monkeypatch.setattr(sys, "argv", [script, "--out", str(tmp_path / "out.json")])
    assert module.main() == 0
    assert seen["GANGSCHED_TEST_DB"].startswith("test_given_")
    monkeypatch.delenv("GANGSCHED_TEST_DB")
    assert module.main() == 0
    assert seen["GANGSCHED_TEST_DB"].startswith(f"{base}_")
