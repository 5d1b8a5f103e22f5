"""The admin shows the topology as applied (levels, domains, declaration; HyperNodes' tier and
members), read-only; deleting goes through services/topology.py, which keeps a Topology a
ResourceFlavor still names, saying so; the Gang admin checks a constraint as the API does."""

import json

import pytest
from django.forms.models import model_to_dict
from django.test import Client

from dashboard.admin_topology import GangTopologyForm
from scheduler_core.models import Gang, HyperNode, Node, ResourceFlavor, Topology

pytestmark = pytest.mark.django_db
BASE = "/admin/scheduler_core"


@pytest.fixture
def browser(olga) -> Client:
    client = Client()
    client.force_login(olga)
    return client


@pytest.fixture
def tas():
    Node.objects.create(name="n1", labels={"rack": "r1"}, allocatable={"cpu": 4000})
    return Topology.objects.create(
        name="tas", levels=["block", "rack"], source_format="kai", declaration={"kind": "Topology"}
    )


def test_the_topology_is_shown_with_its_levels_and_domains(browser, tas):
    listed = browser.get(f"{BASE}/topology/").content.decode()
    assert "block &gt; rack" in listed

    page = browser.get(f"{BASE}/topology/{tas.pk}/change/").content.decode()
    assert "rack: 1 domains, 0 nodes outside" in page
    assert "block: 0 domains, 1 nodes outside" in page
    assert "&quot;kind&quot;: &quot;Topology&quot;" in page
    assert browser.get(f"{BASE}/topology/add/").status_code == 403


def test_hypernodes_show_tier_and_members(browser):
    member = {"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}
    hypernode = HyperNode.objects.create(
        name="s0", tier=1, members=[member], declaration={"spec": {"tierName": "leaf"}}
    )
    page = browser.get(f"{BASE}/hypernode/{hypernode.pk}/change/").content.decode()
    assert "leaf" in page
    assert "Node exactMatch {&quot;name&quot;: &quot;n1&quot;}" in page


def test_a_topology_a_flavor_names_is_not_deleted(browser, tas):
    ResourceFlavor.objects.create(
        name="f", node_labels={"a": "b"}, declaration={"spec": {"topologyName": "tas"}}
    )

    response = browser.post(f"{BASE}/topology/{tas.pk}/delete/", {"post": "yes"}, follow=True)

    assert "opology tas is the topologyName of ResourceFlavor f" in response.content.decode()  # capitalised
    assert Topology.objects.filter(name="tas").exists()
    ResourceFlavor.objects.all().delete()
    browser.post(f"{BASE}/topology/{tas.pk}/delete/", {"post": "yes"})
    assert not Topology.objects.exists()


def _gang_form(gang, **changes):
    data = {key: value for key, value in model_to_dict(gang).items() if value is not None}
    for key in ("min_resources", "declaration", "details"):
        if key in data:
            data[key] = json.dumps(data[key])
    data.update(changes)
    return GangTopologyForm(data=data, instance=gang)


def test_the_gang_admin_checks_a_constraint_as_the_api_does(tas):
    gang = Gang.objects.create(namespace="ml", name="g", min_member=1)

    bad = _gang_form(gang, topology_required="zone")
    assert not bad.is_valid()
    assert bad.errors["topology_required"] == ["unknown level zone: no topology has it"]
    good = _gang_form(gang, topology_required="block", topology_preferred="rack")
    assert good.is_valid(), good.errors
    alone = _gang_form(gang, topology_required="", topology_preferred="", topology_exclusive=True)
    assert not alone.is_valid()
    assert alone.errors["topology_exclusive"] == ["exclusive placement needs topology_required"]
    assert _gang_form(gang, topology_required="rack", topology_exclusive=True).is_valid()
