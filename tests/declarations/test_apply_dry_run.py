"""``manage.py apply --dry-run=server`` (and ``create``, which takes apply's options): every file
applied as for real, each seeing the files before it, in one transaction rolled back; the lines
kubectl would print, with ``(server dry run)``; nothing written or triggered. ``client`` is
refused with the reason, ``none`` is a plain apply."""

from __future__ import annotations

import io

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command

from scheduler_core.management.commands.apply import CLIENT_REFUSED
from scheduler_core.models import Gang, Member

from .conftest import REFERENCE

pytestmark = pytest.mark.django_db

SUFFIX = " (server dry run)"

PODGROUP = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: trainer, namespace: team-a}
spec: {minMember: 2}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer-%d, namespace: team-a, labels: {scheduling.x-k8s.io/pod-group: trainer}}
spec: {schedulerName: gangsched, containers: [{name: main, resources: {requests: {cpu: '1'}}}]}
"""


def row_counts() -> dict[str, int]:
    return {model._meta.label: model._base_manager.count() for model in apps.get_models()}


def run(*args) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def split(dry: list[str]) -> tuple[list[str], list[str]]:
    """A dry run's lines: those a real apply prints too, and each gang's forecast line ("gang
    ns/name would start ..." or "gang ns/name: no forecast: why", docs/forecasts.md)."""
    starts = [line for line in dry if " would start" in line or ": no forecast" in line]
    return [line for line in dry if line not in starts], starts


def test_a_server_dry_run_prints_the_real_lines_and_changes_nothing(
    no_cycle_trigger, django_capture_on_commit_callbacks
):
    before = row_counts()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        dry = run("apply", "-f", str(REFERENCE), "--dry-run=server")
    assert row_counts() == before
    assert callbacks == [] and no_cycle_trigger == []

    with django_capture_on_commit_callbacks(execute=True):
        real = run("apply", "-f", str(REFERENCE))
    assert "gang team-a/trainer created" in real and no_cycle_trigger  # the real one wakes the scheduler
    applied, starts = split(dry)
    assert applied == [line + SUFFIX for line in real]
    assert Gang.objects.count() == 7
    assert sorted(line.split()[1].rstrip(":") for line in starts) == sorted(g.key for g in Gang.objects.all())


def test_each_file_sees_the_ones_before_it(tmp_path):
    """The pods of the second file join the first file's gang, as in a real apply."""
    (tmp_path / "a.yaml").write_text(PODGROUP)
    (tmp_path / "b.yaml").write_text(POD % 0 + "---\n" + POD % 1)
    dry = run("apply", "-f", str(tmp_path), "--dry-run", "server")
    assert not Gang.objects.exists() and not Member.objects.exists()
    real = run("apply", "-f", str(tmp_path))
    applied, starts = split(dry)
    assert applied == [line + SUFFIX for line in real]
    assert [line.split()[1] for line in starts] == ["team-a/trainer"]
    assert Gang.objects.get(name="trainer").members.count() == 2


def test_a_refused_file_is_refused_alike_and_keeps_nothing_of_the_files_before(tmp_path):
    (tmp_path / "a.yaml").write_text(PODGROUP)
    (tmp_path / "b.yaml").write_text(PODGROUP.replace("name: trainer", "name: other").replace("2}", "0}"))
    with pytest.raises(CommandError) as dry:
        run("apply", "-f", str(tmp_path), "--dry-run=server")
    assert not Gang.objects.exists()
    with pytest.raises(CommandError) as real:
        run("apply", "-f", str(tmp_path))
    assert str(dry.value) == str(real.value)
    assert "b.yaml: spec.minMember" in str(dry.value)
    assert list(Gang.objects.values_list("name", flat=True)) == ["trainer"]  # a real apply kept a.yaml


def test_create_takes_the_option_too(tmp_path):
    (tmp_path / "a.yaml").write_text(PODGROUP)
    applied, starts = split(run("create", "-f", str(tmp_path / "a.yaml"), "--dry-run=server"))
    assert applied == [
        "podgroup.scheduling.x-k8s.io/trainer created (server dry run)",
        "gang team-a/trainer created (server dry run)",
    ]
    assert [line.split()[1].rstrip(":") for line in starts] == ["team-a/trainer"]  # it has no pod yet
    assert not Gang.objects.exists()


def test_client_is_refused_with_the_reason_and_none_is_a_plain_apply(tmp_path):
    (tmp_path / "a.yaml").write_text(PODGROUP)
    with pytest.raises(CommandError, match="--dry-run=client is not supported") as refused:
        run("apply", "-f", str(tmp_path), "--dry-run=client")
    assert str(refused.value) == CLIENT_REFUSED and not Gang.objects.exists()
    with pytest.raises(CommandError, match="invalid choice: 'All'"):
        run("apply", "-f", str(tmp_path), "--dry-run=All")
    assert run("apply", "-f", str(tmp_path), "--dry-run=none")[-1] == "gang team-a/trainer created"
    assert Gang.objects.exists()
