"""Finding a YuniKorn application by its applicationId from the command line: ``manage.py apply``
of an application declared by its originator pod, then ``get --application`` and ``describe
application``."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from .conftest import OWN

pytestmark = pytest.mark.django_db

FILE = str(OWN / "yunikorn-originator.yaml")


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_apply_then_get_gangs_of_one_application():
    out = run("apply", "-f", FILE)
    assert "pod/etl-launcher created" in out
    assert "gang data/etl-0042 created" in out and "gang data/etl-0042-workers created" in out
    rows = json.loads(run("get", "gangs", "-A", "--application", "etl-0042", "-o", "json"))
    assert [(r["name"], r["application"], r["group"], r["members"]) for r in rows] == [
        ("etl-0042", "etl-0042", "data/etl-0042", 1),  # the launcher
        ("etl-0042-workers", "etl-0042", "data/etl-0042", 2),  # two placeholders
    ]
    table = run("get", "gangs", "-n", "data", "--application", "report-7", "-o", "wide")
    assert [line.split()[1] for line in table.splitlines()[1:]] == ["report-7-driver"]
    assert "APPLICATION" in table.splitlines()[0]


def test_get_pods_of_an_application_lists_its_placeholders():
    run("apply", "-f", FILE)
    rows = json.loads(run("get", "pods", "--application", "etl-0042", "-o", "json"))
    assert sorted(r["name"] for r in rows) == [
        "etl-launcher",
        "tg-etl-0042-workers-0",
        "tg-etl-0042-workers-1",
    ]
    assert run("get", "pods", "--application", "nope").strip() == "No pods found for application nope."


def test_describe_an_application_shows_each_of_its_gangs():
    run("apply", "-f", FILE)
    text = run("describe", "application", "data/etl-0042")
    assert text.startswith("Application:    data/etl-0042 (2 gangs)")
    assert "Name:           data/etl-0042-workers" in text and "tg-etl-0042-workers-1" in text
    assert "Timeout:        Soft after 120 s, counted from when a member can first be placed" in text
    detail = json.loads(run("describe", "gang", "data/etl-0042-workers", "-o", "json"))
    assert detail["application"] == "etl-0042"
    assert "Application:    etl-0042" in run("describe", "gang", "data/etl-0042")


def test_application_lookups_refuse_what_they_cannot_answer():
    run("apply", "-f", FILE)
    with pytest.raises(CommandError, match="application data/other not found"):
        run("describe", "application", "data/other")
    with pytest.raises(CommandError, match="nodes belong to no application"):
        run("get", "nodes", "--application", "etl-0042")
    with pytest.raises(CommandError, match="--application: give an application id"):
        run("get", "gangs", "--application", " ")


def test_a_pod_with_task_groups_but_no_application_id_is_refused_naming_the_label(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n  annotations:\n"
        '    yunikorn.apache.org/task-groups: \'[{"name": "g", "minMember": 1}]\'\n'
        "spec: {containers: [{name: c}]}\n"
    )
    with pytest.raises(CommandError, match=r"metadata.labels.applicationId: a pod with YuniKorn task-group"):
        run("apply", "-f", str(bad))
