"""Why a gang waits, by reason with node counts, on ``make run``'s demo cluster: the API's ``why``
beside the explanation's text, and ``manage.py describe gang`` showing the same."""

import json
from io import StringIO

from django.core.management import call_command

from scheduler_core.models import Gang
from scheduler_core.services.cycle import cycle_run

from .conftest import job

URL = "/api/v1/gangs/"
TAINT = "4 node(s) had untolerated taint {nvidia.com/gpu: present}"


def submit(client, name: str, **template) -> None:
    pods = [
        {"name": f"{name}-{i}", "requests": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1}}
        for i in range(2)
    ]
    for pod in pods:
        pod.update(template)
    response = client.post(URL, job(name=name, pods=pods), format="json")
    assert response.status_code == 201, response.content


def demo_with_two_waiting_gangs(client) -> None:
    call_command("seed_cluster", stdout=StringIO())
    submit(client, "untolerated")  # GPUs, but no toleration of the GPU nodes' taint
    submit(
        client,
        "selector",
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}],
        nodeSelector={"gpu-model": "h100"},
    )
    cycle_run(holder="why")


def test_the_detail_names_the_taint_with_its_node_count_beside_the_text(as_alice):
    demo_with_two_waiting_gangs(as_alice)
    gang = Gang.objects.get(namespace="ml", name="untolerated")
    assert gang.reason == "NoFeasibleNodes", gang.message
    assert gang.message.startswith(f"0/16 nodes are available: {TAINT}, 12 Insufficient nvidia.com/gpu")

    body = as_alice.get(URL + "ml/untolerated/").json()
    assert body["explanation"]["reason"] == "NoFeasibleNodes"
    why = body["why"]
    assert (why["reason"], why["message"]) == ("NoFeasibleNodes", gang.message)
    (shape,) = why["shapes"]
    assert shape["members"] == 2 and shape["nodes"] == 16 and shape["available"] == 0
    assert shape["requests"] == {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert [(r["reason"], r["count"], r["detail"], r["text"]) for r in shape["reasons"]] == [
        ("UntoleratedTaint", 4, "nvidia.com/gpu=present:NoSchedule", TAINT),
        ("Insufficient", 12, "nvidia.com/gpu", "12 Insufficient nvidia.com/gpu"),
    ]
    assert shape["available"] + sum(r["count"] for r in shape["reasons"]) == shape["nodes"]
    # The list carries the one-line message.
    (row,) = [g for g in as_alice.get(URL).json()["results"] if g["name"] == "untolerated"]
    assert (row["reason"], row["message"]) == ("NoFeasibleNodes", gang.message)


def test_the_selector_is_counted_under_the_selector(as_alice):
    demo_with_two_waiting_gangs(as_alice)
    why = as_alice.get(URL + "ml/selector/").json()["why"]
    assert why["reason"] == "NoFeasibleNodes"
    (shape,) = why["shapes"]
    assert [(r["reason"], r["count"], r["detail"]) for r in shape["reasons"]] == [
        ("NodeSelector", 16, "gpu-model=h100"),
    ]


def test_a_gang_nothing_holds_back_has_no_why(as_alice):
    call_command("seed_cluster", stdout=StringIO())
    submit(as_alice, "fits", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])
    cycle_run(holder="why")
    assert as_alice.get(URL + "ml/fits/").json()["why"] is None


def test_describe_shows_the_counts_per_reason(as_alice):
    demo_with_two_waiting_gangs(as_alice)
    out = StringIO()
    call_command("describe", "gang", "ml/untolerated", stdout=out)
    text = out.getvalue()
    assert "Explanation:    NoFeasibleNodes: 0/16 nodes are available: " + TAINT in text
    assert "  2 x {cpu 2, memory 4Gi, nvidia.com/gpu 1}: 0/16 nodes available" in text
    assert (
        "        4  node(s) had untolerated taint {nvidia.com/gpu: present}  "
        "[nvidia.com/gpu=present:NoSchedule]" in text
    )
    assert "       12  Insufficient nvidia.com/gpu  [nvidia.com/gpu]" in text

    out = StringIO()
    call_command("describe", "gang", "ml/untolerated", "-o", "json", stdout=out)
    why = json.loads(out.getvalue())["why"]
    assert [r["count"] for r in why["shapes"][0]["reasons"]] == [4, 12]
