"""Each format's units, exactly as its project reads them.

KAI: ``pkg/scheduler/plugins/proportion/proportion.go`` (memory x 1000*1000; cpu in millicpus)
and ``pkg/apis/scheduling/v2/resources.go``. YuniKorn: ``pkg/common/resources/quantity.go``
(``ParseVCore``: ``10`` is 10000 milli, ``500m`` is 500; ``ParseQuantity``: no ``m``; digits
only) and its ``quantity_test.go`` cases."""

import json

import pytest

from scheduler_core.declarations import DeclarationError
from scheduler_core.declarations.queues_yunikorn import yunikorn_quantity

from .helpers import load_text, specs_by_name

pytestmark = pytest.mark.django_db


def kai_queue(resources: dict) -> str:
    return json.dumps(
        {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": "q"},
            "spec": {"resources": resources},
        }
    )


def test_kai_amounts_are_rounded_up_exactly_from_what_was_typed():
    spec = specs_by_name(
        load_text(
            kai_queue(
                {
                    "cpu": {"quota": 1500.5, "limit": -1},
                    "memory": {"quota": 0.1, "limit": 3},
                    "gpu": {"quota": 2.0, "limit": -1},
                }
            )
        )
    )["q"]

    assert spec.guarantee == {"cpu": 1501, "memory": 100_000, "nvidia.com/gpu": 2}
    assert spec.max == {"memory": 3_000_000}


def test_kai_no_limit_is_a_max_of_zero_as_kais_over_limit_check_reads_it():
    spec = specs_by_name(load_text(kai_queue({"gpu": {"quota": 1, "limit": -1}})))["q"]
    assert spec.max == {"cpu": 0, "memory": 0} and spec.guarantee == {
        "cpu": 0,
        "memory": 0,
        "nvidia.com/gpu": 1,
    }


@pytest.mark.parametrize(
    ("text", "vcore", "amount"),
    [
        ("10", True, 10_000),
        ("500m", True, 500),
        ("10k", True, 10_000_000),
        ("1Ki", False, 1024),
        ("2 Gi", False, 2 * 2**30),
        ("16G", False, 16 * 10**9),
        ("0", False, 0),
    ],
)
def test_yunikorn_quantities(text, vcore, amount):
    assert yunikorn_quantity(text, "f", vcore=vcore) == amount


@pytest.mark.parametrize(
    ("text", "vcore"),
    [
        ("1.5", False),
        ("1m", False),
        ("1ki", False),
        ("-1", True),
        ("9" * 20, False),
        ("", True),
        ("8Ei", False),
    ],
)
def test_yunikorn_quantities_it_refuses(text, vcore):
    with pytest.raises(DeclarationError) as error:
        yunikorn_quantity(text, "f", vcore=vcore)
    assert error.value.field == "f"


def test_yunikorn_inserts_root_above_top_queues_that_do_not_declare_it():
    """yunikorn-core configvalidator.go ``checkQueuesStructure`` (its test
    ``TestCheckQueuesStructure``): several top queues, or one not named root, go under root."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\ndata:\n  queues.yaml: |\n"
        "    partitions:\n      - name: default\n        queues:\n          - name: a\n"
        "            properties: {priority.offset: 0}\n          - name: b\n"
    )
    specs = specs_by_name(load_text(text))

    assert [(s.name, s.parent) for s in specs.values()] == [
        ("root", None),
        ("root.a", "root"),
        ("root.b", "root"),
    ]
