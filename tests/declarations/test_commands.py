"""manage.py apply / get gangs / describe gang: output as a table and as JSON."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from scheduler_core.models import Gang, Member

from .conftest import OWN, REFERENCE

pytestmark = pytest.mark.django_db


def run(*args, stdin: str | None = None, monkeypatch=None) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_apply_a_directory_loads_every_reference_manifest():
    out = run("apply", "-f", str(REFERENCE))
    assert "podgroup.scheduling.x-k8s.io/trainer created" in out
    assert "gang hpc/mpi-allreduce created" in out
    assert Gang.objects.count() == 7
    # + 2: the YuniKorn Spark application's placeholders for the executors it has not applied yet.
    assert Member.objects.count() == 4 + 3 + 4 + 4 + 2 + 2


def test_apply_reads_stdin(monkeypatch):
    text = (OWN / "deployment.yaml").read_text()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    out = run("apply", "-f", "-")
    assert "deployment.apps/web created" in out


def test_apply_names_the_file_field_and_reason(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata: {name: pg, namespace: ns}\nspec: {minMember: 0}\n"
    )
    with pytest.raises(CommandError, match=r"bad.yaml: spec.minMember: 0 is out of range"):
        run("apply", "-f", str(bad))
    assert not Gang.objects.exists()


def test_apply_refuses_a_missing_file():
    with pytest.raises(CommandError, match="no such file"):
        run("apply", "-f", "/nonexistent.yaml")


def test_get_gangs_prints_a_table_and_json():
    run("apply", "-f", str(REFERENCE / "scheduler-plugins-podgroup.yaml"))
    table = run("get", "gangs")
    header, row = table.splitlines()
    assert header.split()[:7] == ["NAMESPACE", "NAME", "STATE", "START", "MIN-MEMBER", "MEMBERS", "BOUND"]
    assert row.split()[:7] == ["team-a", "trainer", "Pending", "N/A", "4", "4", "0"]  # not forecast yet
    assert header.split()[-1] == "OWNER" and row.split()[-1] == "job.batch/trainer"  # made its pods
    rows = json.loads(run("get", "gangs", "-o", "json"))
    assert len(rows) == 1
    expected = {
        "namespace",
        "name",
        "group",
        "min_member",
        "mode",
        "style",
        "wait_seconds",
        "state",
        "members",
    }
    assert expected | {"bound"} <= set(rows[0])
    assert rows[0] | {"created": None} == rows[0] | {
        "namespace": "team-a",
        "name": "trainer",
        "group": None,
        "min_member": 4,
        "mode": "Strict",
        "style": "Hard",
        "wait_seconds": 120.0,
        "state": "Pending",
        "members": 4,
        "bound": 0,
        "owner": "job.batch/trainer",
        "created": None,
        "start": "N/A",
        "forecast": None,
    }
    assert "SOURCE-FORMAT" in run("get", "gangs", "-o", "wide")
    assert run("get", "gangs", "-n", "elsewhere").strip() == "No gangs found in namespace elsewhere."


def test_get_refuses_an_unknown_resource():
    with pytest.raises(CommandError, match="unknown resource"):
        run("get", "widgets")


def test_describe_gang_shows_group_members_and_events():
    run("apply", "-f", str(REFERENCE / "koordinator-gang-group.yaml"))
    text = run("describe", "gang", "ns-a/gang-ps")
    assert "State:          Pending" in text
    assert "Gang group:     ns-a/gang-ps,ns-b/gang-worker" in text
    assert "ns-b/gang-worker" in text and "ps-1" in text and "<pending>" in text
    assert "created" in text
    data = json.loads(run("describe", "gang", "ns-a/gang-ps", "-o", "json"))
    assert data["min_member"] == 2 and data["mode"] == "Strict" and data["wait_seconds"] == 300.0
    assert [g["key"] for g in data["group"]["gangs"]] == ["ns-a/gang-ps", "ns-b/gang-worker"]
    assert [m["name"] for m in data["members"]] == ["ps-0", "ps-1"]
    assert data["events"][0]["kind"] == "created"
    assert data["progress"] == {"members": 2, "bound": 0, "reserved": 0, "pending": 2, "min_member": 2}


def test_describe_refuses_an_unknown_gang():
    with pytest.raises(CommandError, match="not found"):
        run("describe", "gang", "ns/nope")
