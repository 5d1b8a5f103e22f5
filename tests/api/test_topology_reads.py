"""Domains in the API: each node's domain per level of every topology on
/api/v1/nodes/, each member's on a gang's detail with the gang's constraint; and the same in
``manage.py describe gang``. Who may see what is unchanged: a submitter still sees only her gangs."""

from __future__ import annotations

import io
import json

from django.core.management import call_command
from django.test import Client

from scheduler_core.models import Gang, Member, Node, Topology

from .conftest import make_gang

BLOCK, RACK = "example.com/block", "example.com/rack"


def cluster() -> None:
    for name, block, rack in [("n1", "b1", "r1"), ("n2", "b1", "r2"), ("n3", "b2", "r3")]:
        Node.objects.create(name=name, allocatable={"cpu": 8000}, labels={BLOCK: block, RACK: rack})
    Node.objects.create(name="loose", allocatable={"cpu": 8000}, labels={BLOCK: "b2"})  # no rack label
    Topology.objects.create(name="dc", levels=[BLOCK, RACK])
    gang = make_gang("ml", "train", pods=3)
    Gang.objects.filter(pk=gang.pk).update(
        topology_required=BLOCK, topology_preferred=RACK, topology_name="dc"
    )
    Member.objects.filter(name="train-0").update(node="n1", phase="Running")
    Member.objects.filter(name="train-1").update(node="n2", phase="Running")


def test_nodes_carry_their_domain_at_every_level(as_alice):
    cluster()
    nodes = {n["name"]: n for n in as_alice.get("/api/v1/nodes/").json()}
    assert nodes["n1"]["domains"] == {BLOCK: "b1", RACK: "r1"}
    assert nodes["loose"]["domains"] == {BLOCK: "b2", RACK: None}


def test_nodes_have_no_domains_without_a_topology(as_alice):
    Node.objects.create(name="n1", allocatable={"cpu": 8000}, labels={RACK: "r1"})
    assert as_alice.get("/api/v1/nodes/").json()[0]["domains"] == {}


def test_a_gangs_members_show_their_domains_and_the_gang_its_constraint(as_alice, as_bob):
    cluster()
    body = as_alice.get("/api/v1/gangs/ml/train/").json()
    assert [m["domains"] for m in body["members"]] == [
        {BLOCK: "b1", RACK: "r1"},
        {BLOCK: "b1", RACK: "r2"},
        {BLOCK: None, RACK: None},  # pending
    ]
    assert body["topology"] == {
        "required": BLOCK,
        "preferred": RACK,
        "topology": "dc",
        "exclusive": False,
        "spans": {BLOCK: 1, RACK: 2},
    }
    assert as_bob.get("/api/v1/gangs/ml/train/").status_code == 404  # still alice's only


def test_describe_gang_shows_the_domains_and_the_constraint(db):
    cluster()
    out = io.StringIO()
    call_command("describe", "gang", "ml/train", stdout=out)
    text = out.getvalue()
    assert f"Topology:       required {BLOCK}, preferred {RACK} (topology dc)" in text
    assert "Spans:          1 block, 2 rack (bound members)" in text
    assert "[block=b1 rack=r2]" in text
    out = io.StringIO()
    call_command("describe", "gang", "ml/train", "-o", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["members"][0]["domains"] == {BLOCK: "b1", RACK: "r1"}
    assert data["topology"]["constraint"] == {
        "required": BLOCK,
        "preferred": RACK,
        "topology": "dc",
        "exclusive": False,
    }


def test_an_exclusive_gang_says_so_in_its_detail_describe_and_page(as_alice, alice):
    """JobSet's and LeaderWorkerSet's exclusive-topology: its required domain is its own."""
    cluster()
    Gang.objects.filter(name="train").update(topology_preferred="", topology_exclusive=True)
    assert as_alice.get("/api/v1/gangs/ml/train/").json()["topology"]["exclusive"] is True
    out = io.StringIO()
    call_command("describe", "gang", "ml/train", stdout=out)
    assert f"Topology:       required {BLOCK} (exclusive) (topology dc)" in out.getvalue()
    page = Client()
    page.force_login(alice)
    assert "which no other exclusive gang shares" in page.get("/gangs/ml/train/").content.decode()


def test_describe_gang_without_a_topology_is_as_before(db):
    make_gang("ml", "plain", pods=1)
    out = io.StringIO()
    call_command("describe", "gang", "ml/plain", stdout=out)
    assert "Topology:" not in out.getvalue() and "Spans:" not in out.getvalue()
