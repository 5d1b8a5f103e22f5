"""Queue manifests end to end: ``manage.py apply -f`` / ``delete -f`` and the API's manifest
endpoint, written through ``scheduler_core.services.queues``. Only operators may apply them."""

from io import StringIO

import pytest
from django.core.management import call_command

from scheduler_core.declarations import DeclarationError
from scheduler_core.models import Gang

from ..conftest import apply_text
from .helpers import EXAMPLES

pytestmark = pytest.mark.django_db

URL = "/api/v1/manifests/"
EXAMPLE_FILES = sorted(path.name for path in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_a_submitter_may_not_apply_queues(as_alice, name):
    response = as_alice.post(URL, (EXAMPLES / name).read_text(), content_type="application/yaml")

    assert response.status_code == 403
    assert "only operators may apply" in str(response.json())


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_a_viewer_who_sees_every_gang_may_not_apply_queues(as_vera, name):
    response = as_vera.post(URL, (EXAMPLES / name).read_text(), content_type="application/yaml")
    assert response.status_code == 403


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_every_example_applies_then_reapplies_unchanged(name):
    text = (EXAMPLES / name).read_text()

    first = apply_text(text)
    second = apply_text(text)

    assert first.lines and all(line.endswith(" created") for line in first.lines), first.lines
    assert all(line.endswith(" unchanged") for line in second.lines), second.lines


def test_an_operator_applies_queues_through_the_api(as_olga):
    response = as_olga.post(URL, (EXAMPLES / "kai-queues.yaml").read_text(), content_type="application/yaml")

    assert response.status_code == 201, response.json()
    assert response.json()["lines"] == [
        "queue.scheduling.run.ai/research created",
        "queue.scheduling.run.ai/research-vision created",
    ]


def test_delete_f_removes_the_queues_of_a_file():
    path = EXAMPLES / "volcano-queues.yaml"
    apply_text(path.read_text())
    out = StringIO()

    call_command("delete", "-f", str(path), stdout=out)

    # kubectl's lines, in the file's order, though children were deleted before their parent
    assert out.getvalue().splitlines() == [
        'queue.scheduling.volcano.sh "ml" deleted',
        'queue.scheduling.volcano.sh "ml-training" deleted',
        'queue.scheduling.volcano.sh "ml-inference" deleted',
    ]
    assert apply_text(path.read_text()).lines[0].endswith(" created")  # gone, so created again


def test_an_unknown_parent_is_refused_naming_the_queue_and_nothing_is_written():
    """Volcano TestAdmitHierarchicalQueues (pkg/webhooks/admission/queues/validate/
    validate_queue_test.go): a queue whose parent does not exist is refused."""
    orphan = (
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: orphan}\n"
        "spec: {parent: missing}\n"
    )
    group = (
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
        "metadata: {name: g, namespace: ns}\nspec: {minMember: 1, queue: orphan}\n"
    )
    with pytest.raises(DeclarationError) as error:
        apply_text(group + "---\n" + orphan)

    assert error.value.field.startswith("documents[1]")
    assert not Gang.objects.exists()


def test_a_gang_applied_with_its_queue_is_in_it():
    queues = (EXAMPLES / "kai-queues.yaml").read_text()
    pods = "".join(
        f"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: w-{i}\n  namespace: vision\n  labels:\n"
        "    scheduling.x-k8s.io/pod-group: train\n    kai.scheduler/queue: research-vision\n"
        "spec:\n  schedulerName: gangsched\n"
        "  containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]\n"
        for i in range(2)
    )
    apply_text(queues + pods)

    assert Gang.objects.get(namespace="vision", name="train").queue == "research-vision"
