import pytest
from django.urls import reverse

from scheduler_core.models import BindJournal, Gang, GangEvent, GangGroup, Member, Node, SchedulingCycle

pytestmark = pytest.mark.django_db

MODELS = [Node, GangGroup, Gang, Member, SchedulingCycle, GangEvent, BindJournal]


@pytest.fixture
def world():
    group = GangGroup.objects.create(key="ml/pair", members=["ml/train", "ml/eval"])
    gang = Gang.objects.create(namespace="ml", name="train", min_member=1, group=group)
    member = Member.objects.create(namespace="ml", name="train-0", gang=gang)
    Node.objects.create(name="gpu-a", allocatable={"cpu": 8000})
    cycle = SchedulingCycle.objects.create(pods_considered=1, pods_bound=1, epoch=1)
    GangEvent.objects.create(gang=gang, kind="created", cycle=cycle)
    BindJournal.objects.create(epoch=1, member=member, gang=gang, cycle=cycle, node="gpu-a")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_model_has_a_working_changelist(admin_client, world, model):
    url = reverse(f"admin:scheduler_core_{model._meta.model_name}_changelist")

    response = admin_client.get(url, {"q": "train"})

    assert response.status_code == 200


@pytest.mark.parametrize("model", [SchedulingCycle, GangEvent, BindJournal], ids=lambda m: m.__name__)
def test_history_cannot_be_added_in_the_admin(admin_client, model):
    url = reverse(f"admin:scheduler_core_{model._meta.model_name}_add")

    assert admin_client.get(url).status_code == 403
