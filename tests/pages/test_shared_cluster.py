"""What an operator of a shared cluster looks for: the Overview's "Queues needing attention"
(borrowing, at max, over quota, the gang waiting longest) and the Queues page's waiting gangs
in the order the engine tries them, each user seeing only the gangs they may see."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduler_core.engine.queue import build_units, pods_by_gang
from scheduler_core.models import Gang, Member, Node
from scheduler_core.services.cycle import engine_config
from scheduler_core.services.queues import queues_put
from scheduler_core.snapshot.build import build_snapshot
from tests.queues.conftest import spec

from .conftest import make_gang

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"


@pytest.fixture(autouse=True)
def no_cycle_trigger(monkeypatch):
    monkeypatch.setattr("scheduler_core.tasks.cycle_trigger", lambda: True)


def gpu_gang(name, *, submitter, queue, minutes_ago, gpus=1, duration=None, priority=None, pods=2):
    gang = make_gang("ml", name, submitter=submitter, queue=queue, pods=pods, priority=priority)
    Gang.objects.filter(pk=gang.pk).update(
        created=timezone.now() - timedelta(minutes=minutes_ago),
        reason="InsufficientResources",
        message=f"{pods} members need {gpus} GPU each\nsecond line",
    )
    Member.objects.filter(gang=gang).update(requests={"cpu": 1000, GPU: gpus}, duration_seconds=duration)
    return gang


def bind(gang, node="n1"):
    Member.objects.filter(gang=gang).update(node=node, phase="Running")
    Gang.objects.filter(pk=gang.pk).update(phase="Running", reason="", message="")


@pytest.fixture
def shared(db):
    """ml (max 8 GPUs) over nlp (guarantee 2) and cv (guarantee 4, max 4): bob's running gang uses
    4 GPUs of nlp (borrowing 2), carol's 4 of cv (at max); alice and bob wait in nlp."""
    Node.objects.create(name="n1", allocatable={"cpu": 64000, "memory": 2**38, GPU: 16})
    queues_put(
        [
            spec("ml", max={GPU: 8}),
            spec("nlp", parent="ml", guarantee={GPU: 2}),
            spec("cv", parent="ml", guarantee={GPU: 4}, max={GPU: 4}),
        ]
    )
    bind(gpu_gang("run", submitter="bob", queue="nlp", minutes_ago=90, gpus=2))
    bind(gpu_gang("see", submitter="carol", queue="cv", minutes_ago=80, gpus=2))
    return {
        "old": gpu_gang("old", submitter="alice", queue="nlp", minutes_ago=50),
        "bobs": gpu_gang("bobs", submitter="bob", queue="nlp", minutes_ago=40),
        "urgent": gpu_gang("urgent", submitter="bob", queue="nlp", minutes_ago=5, priority=100),
        "mine": gpu_gang("mine", submitter="alice", queue="nlp", minutes_ago=3),
    }


def pending(client, queue):
    rows = {row["name"]: row for row in client.get("/queues/").context["queues"]}
    return rows[queue]["attention"]


def test_badges_say_who_borrows_and_who_is_at_its_max(as_olga, shared):
    rows = {row["name"]: row["attention"] for row in as_olga.get("/queues/").context["queues"]}
    assert [f["flag"] for f in rows["nlp"]["flags"]] == ["borrowing"]
    assert rows["nlp"]["flags"][0]["title"] == f"uses more than its guarantee: cpu 2, {GPU} 2 above it"
    assert [f["flag"] for f in rows["cv"]["flags"]] == ["at max", "borrowing"]  # cpu: no guarantee
    assert [f["flag"] for f in rows["ml"]["flags"]] == ["at max", "borrowing"]  # 8 of max 8
    from scheduler_core.models import Queue

    Queue.objects.filter(name="cv").update(max={GPU: 3})  # lowered below what it holds
    flags = pending(as_olga, "cv")["flags"]
    assert [f["flag"] for f in flags] == ["over quota", "borrowing"]
    html = as_olga.get("/queues/").content.decode()
    assert 'class="queue-flag" data-flag="over quota"' in html


def test_pending_gangs_are_listed_in_the_engine_s_order(as_olga, shared, settings):
    settings.GANGSCHED_OVERTAKE_LIMIT_S = 0  # FIFO within a priority
    listed = [g["key"] for g in pending(as_olga, "nlp")["gangs"]]
    assert listed == ["ml/urgent", "ml/old", "ml/bobs", "ml/mine"]
    # Least declared work overtakes within the limit: "mine" declares 60 GPU-seconds, the others
    # none (the largest work), so it passes those created up to the limit before it.
    settings.GANGSCHED_OVERTAKE_LIMIT_S = 3600
    Member.objects.filter(gang=shared["mine"]).update(duration_seconds=30)
    snapshot = build_snapshot()
    units = build_units(snapshot, engine_config(), {g.key: g for g in snapshot.gangs}, pods_by_gang(snapshot))
    engine_order = [unit.key for unit in units]
    listed = pending(as_olga, "nlp")["gangs"]
    assert [g["key"] for g in listed] == engine_order == ["ml/urgent", "ml/mine", "ml/old", "ml/bobs"]
    assert [g["position"] for g in listed] == [1, 2, 3, 4]
    html = as_olga.get("/queues/").content.decode()
    section = html[html.index('id="queue-pending"') :]
    assert '<li data-gang="ml/urgent" data-position="1"><span class="position">1st</span>' in section
    assert "waiting 50 min" in section and "second line" not in section


def test_a_submitter_is_listed_only_their_own_gangs_with_their_place(as_alice, shared, settings):
    """bob's urgent gang and his older one wait among alice's two: she is told neither their
    names nor their number; her gangs are placed among her own (docs/security.md)."""
    settings.GANGSCHED_OVERTAKE_LIMIT_S = 0
    lane = pending(as_alice, "nlp")
    assert [(g["key"], g["position"], g["ahead"]) for g in lane["gangs"]] == [
        ("ml/old", 1, 0),
        ("ml/mine", 2, 1),
    ]
    assert (lane["total"], lane["own"]) == (2, 2)
    html = as_alice.get("/queues/").content.decode()
    assert "ml/bobs" not in html and "ml/urgent" not in html
    assert '<span class="position">2nd</span> <small class="why">of yours</small>' in html
    assert "2 of yours waiting" in html and "4 waiting" not in html


def test_the_live_answer_carries_the_lanes_and_badges_the_page_shows(as_olga, shared):
    page = as_olga.get("/queues/")
    html = page.content.decode()
    section = html[html.index('<div id="queue-pending-lanes">') + len('<div id="queue-pending-lanes">') :]
    live = as_olga.get("/queues/live/").json()
    assert section.startswith(live["pending_html"]) and "ml/urgent" in live["pending_html"]
    flags = {row["name"]: [f["flag"] for f in row["flags"]] for row in live["queues"]}
    shown = page.context["queues"]
    assert flags == {row["name"]: [f["flag"] for f in row["attention"]["flags"]] for row in shown}
    assert "at max" in flags["cv"] and "borrowing" in flags["nlp"]


def test_the_list_is_cut_after_ten_with_a_link_to_the_rest(as_olga, shared):
    for i in range(11):
        gpu_gang(f"extra{i:02d}", submitter="alice", queue="cv", minutes_ago=1)
    lane = pending(as_olga, "cv")
    assert len(lane["gangs"]) == 10 and lane["more"] == 1
    html = as_olga.get("/queues/").content.decode()
    assert 'href="/gangs/?queue=cv&amp;waiting=1">1 more</a>' in html


def test_the_overview_card_lists_the_queues_needing_attention(as_olga, shared):
    response = as_olga.get("/")
    rows = response.context["attention"]["rows"]
    assert [row["name"] for row in rows] == ["nlp", "ml", "cv"]  # longest wait first, then by path
    nlp = rows[0]
    assert nlp["oldest"]["key"] == "ml/old" and nlp["waiting"] == 4
    assert [f["flag"] for f in nlp["flags"]] == ["borrowing"]
    html = response.content.decode()
    card = html[html.index('id="queues-attention"') : html.index("Last hour")]
    assert '<a href="/queues/#queue-nlp">ml/nlp</a>' in card
    assert '<a data-gang="ml/old" href="/gangs/ml/old/">ml/old</a>' in card
    assert "waiting 50 min</span>, 2nd in line" in card and "InsufficientResources" in card
    assert 'data-flag="at max"' in card


def test_tenancy_a_submitter_never_sees_another_s_gang(as_alice, as_bob, shared):
    """alice's card and pending lists show her gangs only; bob's show his."""
    for client, own, others in (
        (as_alice, {"ml/old", "ml/mine"}, {"ml/bobs", "ml/urgent", "ml/run", "ml/see"}),
        (as_bob, {"ml/bobs", "ml/urgent"}, {"ml/old", "ml/mine", "ml/see"}),
    ):
        card = client.get("/").content.decode()
        card = card[card.index('id="queues-attention"') : card.index("Last hour")]
        queues = client.get("/queues/").content.decode()
        section = queues[queues.index('id="queue-pending"') : queues.index('id="queue-chart"')]
        live = client.get("/queues/live/").json()  # what the page rewrites itself with
        for key in others:
            assert key not in card and key not in section and key not in live["pending_html"]
        assert any(key in section for key in own)
        assert any(key in live["pending_html"] for key in own)
        listed = {
            g["key"] for row in client.get("/queues/").context["queues"] for g in row["attention"]["gangs"]
        }
        assert listed <= own
    # alice's oldest gang waits behind bob's urgent one: she reads its place among hers only.
    card = as_alice.get("/").content.decode()
    assert "waiting 50 min</span>, 1st of yours in line" in card


def test_no_queues_no_card_rows(as_olga):
    """Without declared queues the card says so, not that no gang waits (one does)."""
    make_gang("ml", "lonely", submitter="alice")
    html = as_olga.get("/").content.decode()
    assert "No queues are declared: gangs wait in one queue, <code>default</code>" in html
    assert "No queue borrows" not in html


def test_a_cpu_rack_s_cell_is_coloured_by_its_cpus_and_racks_are_one_column(as_olga):
    """With GPUs in the cluster a full rack of CPU nodes is as dark as a full GPU rack; two
    topologies' rack levels are one "rack" column; each node lists its taints and labels."""
    import re

    from scheduler_core.models import Topology

    rack, kai_rack, host = (
        "topology.gangsched.io/rack",
        "topology.kubernetes.io/rack",
        "kubernetes.io/hostname",
    )
    Node.objects.create(
        name="gpu-1",
        allocatable={"cpu": 64000, GPU: 8},
        labels={rack: "g1", kai_rack: "g1", host: "gpu-1"},
        taints=[{"key": GPU, "value": "present", "effect": "NoSchedule"}],
    )
    Node.objects.create(name="gpu-2", allocatable={"cpu": 64000, GPU: 8}, labels={rack: "g1", host: "gpu-2"})
    for i in (1, 2):
        Node.objects.create(
            name=f"cpu-{i}", allocatable={"cpu": 32000}, labels={rack: "c1", host: f"cpu-{i}"}
        )
    Node.objects.filter(name__startswith="cpu").update(external_usage={"cpu": 32000})  # full
    Topology.objects.create(name="demo", levels=[rack, host])
    Topology.objects.create(name="kai", levels=[kai_rack, host])
    Node.objects.create(
        name="gpu-3", allocatable={"cpu": 64000, GPU: 8}, labels={kai_rack: "k2", host: "gpu-3"}
    )
    Node.objects.create(
        name="gpu-4", allocatable={"cpu": 64000, GPU: 8}, labels={kai_rack: "k2", host: "gpu-4"}
    )

    html = as_olga.get("/nodes/").content.decode()
    cell = re.search(r'<a class="heat-cell heat-(\w+)"[^>]*data-domain="c1"[^>]*>', html)
    assert cell.group(1) == "10" and 'data-pct="100"' in cell.group(0)
    assert 'data-cpu-used="64000"' in cell.group(0)
    assert "no GPUs, CPUs 100% used" in cell.group(0)
    assert html.count(">rack</th>") == 1
    assert f'<th title="{rack}, {kai_rack}">rack</th>' in html
    row = html[html.index('<tr data-node="gpu-1">') :]
    row = row[: row.index("</tr>")]
    assert '<td class="domain">g1</td>' in row  # both keys say g1: once
    assert f'<code class="taint" data-taint="{GPU}">{GPU}=present:NoSchedule</code>' in row
    assert "<summary>3 labels</summary>" in row and f"<code>{rack}=g1</code>" in row
