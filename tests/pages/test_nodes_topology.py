"""The Nodes page with a topology: a heat map of free and used GPUs per block and per
rack, the ``?level=&domain=`` filter narrowing the table, bad filters named, and no query per
node or per domain."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scheduler_core.models import Member, Node, Topology
from tests.pages.conftest import make_gang

pytestmark = pytest.mark.django_db

BLOCK, RACK, HOST = "topology.gangsched.io/block", "topology.gangsched.io/rack", "kubernetes.io/hostname"


def fleet(racks: int = 4, per_rack: int = 2, gpus: int = 8) -> None:
    """``racks`` racks of ``per_rack`` GPU nodes, two racks per block."""
    for r in range(racks):
        for n in range(per_rack):
            name = f"r{r}-n{n}"
            Node.objects.create(
                name=name,
                allocatable={"cpu": 64000, "memory": 2**38, "nvidia.com/gpu": gpus},
                labels={BLOCK: f"b{r // 2}", RACK: f"r{r}", HOST: name},
            )
    Topology.objects.create(name="dc", levels=[BLOCK, RACK, HOST])


def bind(gang, nodes: list[str], gpus: int) -> None:
    for member, node in zip(gang.members.order_by("name"), nodes, strict=True):
        Member.objects.filter(pk=member.pk).update(
            node=node, phase="Running", requests={"cpu": 1000, "nvidia.com/gpu": gpus}
        )


def cells(html: str) -> dict[tuple[str, str], dict[str, str]]:
    """Each heat-map cell's data attributes, by (level, domain)."""
    out = {}
    for tag in re.findall(r'<a class="heat-cell[^>]*>', html):
        attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', tag))
        attrs["aria"] = re.search(r'aria-label="([^"]*)"', tag).group(1)
        out[(attrs["level"], attrs["domain"])] = attrs
    return out


def node_rows(html: str) -> list[str]:
    return re.findall(r'<tr data-node="([^"]+)">', html)


def test_the_heat_map_sums_free_and_used_gpus_per_block_and_rack(as_olga):
    fleet()
    bind(make_gang("ml", "train", pods=3), ["r0-n0", "r0-n1", "r2-n0"], gpus=6)
    Node.objects.filter(name="r3-n1").update(unschedulable=True)  # cordoned: nothing free there

    html = as_olga.get("/nodes/").content.decode()
    found = cells(html)

    assert set(found) == {(BLOCK, "b0"), (BLOCK, "b1"), *((RACK, f"r{r}") for r in range(4))}  # no host map
    assert found[(RACK, "r0")] | {"aria": ""} == {
        "level": RACK, "domain": "r0", "capacity": "16", "used": "12", "free": "4", "nodes": "2", "pct": "75",
        "aria": "",
    }  # fmt: skip
    assert (
        found[(RACK, "r0")]["aria"]
        == "rack r0: 4 free, 12 used of 16 GPUs; 126 free, 2 used of 128 CPUs, 2 nodes"
    )
    assert (found[(BLOCK, "b1")]["used"], found[(BLOCK, "b1")]["free"]) == ("6", "18")  # r3-n1 cordoned
    assert (found[(RACK, "r3")]["used"], found[(RACK, "r3")]["free"]) == ("0", "8")
    assert 'class="heat-cell heat-7"' in html  # r0: 75% used
    # The table shows each node's block and rack.
    assert '<th title="topology.gangsched.io/rack">rack</th>' in html


def test_filtering_by_a_domain_narrows_the_node_table(as_olga):
    fleet()

    everything = node_rows(as_olga.get("/nodes/").content.decode())
    rack = as_olga.get("/nodes/", {"level": RACK, "domain": "r1"})
    block = as_olga.get("/nodes/", {"level": BLOCK, "domain": "b1"})

    assert len(everything) == 8
    assert rack.status_code == 200 and node_rows(rack.content.decode()) == ["r1-n0", "r1-n1"]
    assert 'aria-current="true"' in rack.content.decode()
    assert node_rows(block.content.decode()) == ["r2-n0", "r2-n1", "r3-n0", "r3-n1"]
    empty = as_olga.get("/nodes/", {"level": RACK, "domain": "r9"}).content.decode()
    assert node_rows(empty) == [] and "No nodes in this domain." in empty


@pytest.mark.parametrize(
    ("params", "field", "reason"),
    [
        ({"level": "example.com/row", "domain": "x"}, "level", "is no level of any topology"),
        ({"domain": "r1"}, "level", "a domain needs its level"),
        ({"level": RACK}, "domain", "which domain of"),
    ],
)
def test_a_bad_filter_is_named_and_filters_nothing(as_olga, params, field, reason):
    fleet()

    response = as_olga.get("/nodes/", params)

    html = response.content.decode()
    assert response.status_code == 400
    assert f'data-field="{field}"' in html and reason in html
    assert len(node_rows(html)) == 8


def test_without_a_topology_the_page_is_as_before_and_a_filter_says_why(as_olga):
    Node.objects.create(name="n1", allocatable={"cpu": 4000}, labels={RACK: "r0"})

    plain = as_olga.get("/nodes/").content.decode()
    filtered = as_olga.get("/nodes/", {"level": RACK, "domain": "r0"})

    assert "heat-cell" not in plain and 'id="topology"' not in plain
    assert filtered.status_code == 400 and "no topology is declared" in filtered.content.decode()


def test_cpu_is_the_main_resource_without_gpus(as_olga):
    for i in range(4):
        Node.objects.create(name=f"c{i}", allocatable={"cpu": 32000}, labels={RACK: f"r{i // 2}"})
    Topology.objects.create(name="dc", levels=[RACK])

    found = cells(as_olga.get("/nodes/").content.decode())

    assert found[(RACK, "r0")]["aria"] == "rack r0: 64 free, 0 used of 64 CPUs, 2 nodes"


def test_a_submitter_sees_the_same_heat_map(as_alice):
    fleet()

    assert len(cells(as_alice.get("/nodes/").content.decode())) == 6


def test_the_heat_map_costs_no_query_per_node_or_domain(as_olga):
    fleet(racks=2)
    with CaptureQueriesContext(connection) as few:
        as_olga.get("/nodes/")
    fleet_more = [f"x{i}" for i in range(40)]
    for i, name in enumerate(fleet_more):
        Node.objects.create(
            name=name, allocatable={"cpu": 1000, "nvidia.com/gpu": 1}, labels={RACK: f"x{i % 10}"}
        )
    with CaptureQueriesContext(connection) as many:
        as_olga.get("/nodes/")

    assert len(many) == len(few)


def test_the_gang_page_shows_each_members_domains_and_the_constraint(as_olga):
    fleet()
    gang = make_gang("ml", "train", pods=3)
    bind(gang, ["r0-n0", "r1-n1", "r1-n0"], gpus=8)
    Member.objects.filter(gang=gang, name="train-2").update(node=None, phase="Pending")
    type(gang).objects.filter(pk=gang.pk).update(topology_required=BLOCK, topology_preferred=RACK)

    html = as_olga.get("/gangs/ml/train/").content.decode()

    assert (
        '<th title="topology.gangsched.io/block">block</th><th title="topology.gangsched.io/rack">rack</th>'
        in html
    )
    rows = re.findall(r"<tr><td>(train-\d)</td>.*?</tr>", html)
    assert rows == ["train-0", "train-1", "train-2"]
    domains = re.findall(r'<td class="domain">([^<]*)</td>', html)
    assert domains == ["b0", "r0", "r0-n0", "b0", "r1", "r1-n1", "—", "—", "—"]
    assert f'data-required="{BLOCK}" data-preferred="{RACK}"' in html
    assert "1 block, 2 racks, 2 hostnames" in html


def test_a_domain_name_is_escaped_in_the_heat_map(as_olga):
    for i in range(2):
        Node.objects.create(name=f"n{i}", allocatable={"cpu": 1000}, labels={RACK: 'r"><script>x</script>'})
    Topology.objects.create(name="dc", levels=[RACK])

    html = as_olga.get("/nodes/").content.decode()

    assert "<script>x" not in html and "&lt;script&gt;x" in html
    assert "?level=topology.gangsched.io%2Frack&amp;domain=r%22%3E%3Cscript%3Ex%3C%2Fscript%3E" in html


def test_a_crowded_level_is_drawn_inside_the_picked_wider_domain(as_olga, settings):
    """70 racks of two nodes, 10 to a block: the racks are too many to draw (MAX_CELLS 64), so the
    map shows those of the block picked, or the siblings of the rack picked, else says to pick."""
    Node.objects.bulk_create(
        Node(name=f"n{i:03d}", allocatable={"cpu": 1000, "nvidia.com/gpu": 1},
             labels={BLOCK: f"b{i // 20}", RACK: f"r{i // 2:02d}"})
        for i in range(140)
    )  # fmt: skip
    Topology.objects.create(name="dc", levels=[BLOCK, RACK])

    def drawn(params):
        found = cells(as_olga.get("/nodes/", params).content.decode())
        return sorted(domain for level, domain in found if level == RACK), len(
            [1 for level, _ in found if level == BLOCK]
        )

    unpicked = as_olga.get("/nodes/").content.decode()
    assert drawn({}) == ([], 7)
    assert "70 rack domains: pick a block above to see its own" in unpicked
    assert drawn({"level": BLOCK, "domain": "b3"}) == ([f"r{i}" for i in range(30, 40)], 7)
    assert drawn({"level": RACK, "domain": "r42"}) == ([f"r{i}" for i in range(40, 50)], 7)
    assert (
        "70 rack domains: those of block b4 shown"
        in as_olga.get("/nodes/", {"level": RACK, "domain": "r42"}).content.decode()
    )


def test_the_filter_survives_paging(as_olga):
    Node.objects.bulk_create(
        Node(name=f"n{i:03d}", allocatable={"cpu": 1000}, labels={RACK: "big" if i < 150 else "small"})
        for i in range(160)
    )
    Topology.objects.create(name="dc", levels=[RACK])

    first = as_olga.get("/nodes/", {"level": RACK, "domain": "big"}).content.decode()
    second = as_olga.get("/nodes/", {"level": RACK, "domain": "big", "page": 2}).content.decode()

    assert "level=topology.gangsched.io%2Frack&amp;domain=big&amp;page=2" in first
    assert len(node_rows(first)) == 100 and node_rows(second) == [f"n{i:03d}" for i in range(100, 150)]


def test_the_demo_fleet_shows_its_racks_and_blocks(as_olga):
    from io import StringIO

    from django.core.management import call_command

    call_command("seed_cluster", stdout=StringIO())

    found = cells(as_olga.get("/nodes/").content.decode())

    assert sorted(domain for level, domain in found if level == BLOCK) == [
        "cpu-block-01", "cpu-block-02", "gpu-block-01",
    ]  # fmt: skip
    assert (
        found[(RACK, "gpu-rack-01")]["aria"]
        == "rack gpu-rack-01: 32 free, 0 used of 32 GPUs; 256 free, 0 used of 256 CPUs, 4 nodes"
    )
    # A rack of CPU nodes shows its CPUs (it has no GPU).
    assert (
        found[(RACK, "cpu-rack-01")]["aria"]
        == "rack cpu-rack-01: no GPUs; 128 free, 0 used of 128 CPUs, 4 nodes"
    )


def test_the_sums_grouped_in_sql_are_those_of_the_pass_over_the_nodes():
    """``domain_sums`` (PostgreSQL) and the pass over every node (used with Volcano HyperNodes)
    give the same cells and the same domains above each, cordoned, external and unlabelled
    nodes included; the hostname level is left out unless a label renames a node."""
    from dashboard.pages.domain_sums import domain_sums
    from dashboard.pages.node_domains import _summed_in_python

    fleet()
    bind(make_gang("ml", "train", pods=3), ["r0-n0", "r0-n1", "r2-n0"], gpus=6)
    Node.objects.filter(name="r3-n1").update(unschedulable=True)
    Node.objects.filter(name="r1-n0").update(ready=False, external_usage={"nvidia.com/gpu": 2})
    Node.objects.create(name="loose", allocatable={"nvidia.com/gpu": 4})  # in no block or rack
    keys = [BLOCK, RACK, HOST]
    python_sums, python_placed, _, _ = _summed_in_python(keys, "nvidia.com/gpu", None)
    sums, placed = domain_sums(keys, "nvidia.com/gpu", None)
    assert sums[:2] == python_sums[:2] and placed[:2] == python_placed[:2]
    assert sums[2] == {} and all(n == 1 for *_, n in python_sums[2].values())
    Node.objects.filter(name="r0-n1").update(labels={BLOCK: "b0", RACK: "r0", HOST: "r0-n0"})
    python_sums, python_placed, _, _ = _summed_in_python(keys, "nvidia.com/gpu", None)
    assert domain_sums(keys, "nvidia.com/gpu", None) == (python_sums, python_placed)
    assert python_sums[2]["r0-n0"][3] == 2  # two nodes say they are host r0-n0: a map is drawn


def test_with_volcano_hypernodes_the_page_sums_in_python_and_still_filters(as_olga):
    """HyperNodes name no label (their tree is resolved in Python): the page draws their tiers'
    heat map from one pass over the nodes, and a HyperNode's cell narrows the table to its nodes."""
    from scheduler_core.models import HyperNode
    from scheduler_core.reads.topology_domains import HYPERNODE_TOPOLOGY, hypernode_label

    fleet()
    bind(make_gang("ml", "train", pods=2), ["r0-n0", "r0-n1"], gpus=8)
    exact = lambda name: {"type": "Node", "selector": {"exactMatch": {"name": name}}}  # noqa: E731
    HyperNode.objects.create(name="hn-a", tier=1, members=[exact("r0-n0"), exact("r0-n1"), exact("r1-n0")])
    HyperNode.objects.create(name="hn-b", tier=1, members=[exact("r2-n0"), exact("r2-n1")])
    tier = hypernode_label(1)
    Topology.objects.create(name=HYPERNODE_TOPOLOGY, levels=[tier])  # a level the page draws

    found = cells(as_olga.get("/nodes/").content.decode())
    hn_a = found[(tier, "hn-a")]
    assert (hn_a["used"], hn_a["capacity"], hn_a["nodes"]) == ("16", "24", "3")
    assert found[(RACK, "r0")]["used"] == "16"  # the label levels are summed in the same pass
    picked = as_olga.get("/nodes/", {"level": tier, "domain": "hn-a"})
    assert node_rows(picked.content.decode()) == ["r0-n0", "r0-n1", "r1-n0"]
