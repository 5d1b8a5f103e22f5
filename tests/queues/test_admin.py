"""The admin's queue forms go through services/queues.py: a bad tree is a form error on the
field at fault and nothing is saved; a queue still needed is not deleted; access rows name
exactly one of a user and a group."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from scheduler_core.models import Gang, LocalQueue, Queue, QueueAccess, ResourceFlavor

pytestmark = pytest.mark.django_db
GPU = "nvidia.com/gpu"
ADD = "/admin/scheduler_core/queue/add/"


@pytest.fixture
def browser(olga) -> Client:
    client = Client()
    client.force_login(olga)
    return client


def form(**fields) -> dict:
    data = {
        "name": "ml",
        "parent": "",
        "guarantee": "{}",
        "max": "{}",
        "lending_limit": "{}",
        "weight": "1",
        "reclaimable": "on",
        "open": "on",
        "access-TOTAL_FORMS": "0",
        "access-INITIAL_FORMS": "0",
        "access-MIN_NUM_FORMS": "0",
        "access-MAX_NUM_FORMS": "1000",
    }
    data.update(fields)
    return data


def field_errors(response, field):
    return response.context["adminform"].form.errors.get(field)


def test_an_operator_creates_a_queue_with_who_may_submit(browser, bob):
    data = form(guarantee='{"nvidia.com/gpu": 4}', max='{"nvidia.com/gpu": 8}')
    data.update({"access-TOTAL_FORMS": "1", "access-0-user": str(bob.pk), "access-0-group": ""})

    response = browser.post(ADD, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    queue = Queue.objects.get(name="ml")
    assert (queue.guarantee, queue.max, queue.source_format) == ({GPU: 4}, {GPU: 8}, "admin")
    assert list(QueueAccess.objects.values_list("user__username", flat=True)) == ["bob"]


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        (
            {"guarantee": '{"nvidia.com/gpu": 8}', "max": '{"nvidia.com/gpu": 4}'},
            "max",
            "below the guarantee",
        ),
        ({"guarantee": '{"cpu": 1}', "lending_limit": '{"cpu": 2}'}, "lending_limit", "above the guarantee"),
        ({"weight": "0"}, "weight", "greater than 0"),
        ({"guarantee": '{"cpu": -1}'}, "guarantee", "negative"),
    ],
)
def test_a_bad_queue_is_a_form_error_on_its_field(browser, fields, field, words):
    response = browser.post(ADD, form(**fields))

    assert response.status_code == 200
    assert words in " ".join(field_errors(response, field))
    assert not Queue.objects.exists()


def test_children_guaranteed_more_than_the_parents_max_are_refused(browser):
    parent = Queue.objects.create(name="ml", max={GPU: 4})
    response = browser.post(ADD, form(name="nlp", parent=str(parent.pk), guarantee='{"nvidia.com/gpu": 8}'))
    assert "above its max 4" in " ".join(field_errors(response, "guarantee"))
    assert not Queue.objects.filter(name="nlp").exists()


def test_a_cycle_is_refused_on_change(browser):
    a = Queue.objects.create(name="a")
    b = Queue.objects.create(name="b", parent=a)
    response = browser.post(f"/admin/scheduler_core/queue/{a.pk}/change/", form(parent=str(b.pk)))
    assert "its own ancestor" in " ".join(field_errors(response, "parent"))
    assert Queue.objects.get(name="a").parent is None


def test_an_access_row_needs_exactly_one_of_user_and_group(browser, bob):
    team = Group.objects.create(name="team")
    data = form()
    data.update({"access-TOTAL_FORMS": "1", "access-0-user": str(bob.pk), "access-0-group": str(team.pk)})
    response = browser.post(ADD, data)
    assert response.status_code == 200
    assert "exactly one" in response.content.decode()
    assert not Queue.objects.exists()


def test_a_queue_in_use_is_not_deleted(browser):
    queue = Queue.objects.create(name="ml")
    Gang.objects.create(namespace="ns", name="g", min_member=1, queue="ml")
    response = browser.post(f"/admin/scheduler_core/queue/{queue.pk}/delete/", {"post": "yes"}, follow=True)
    assert "holds active gangs or pods" in response.content.decode()
    assert Queue.objects.filter(name="ml").exists()
    Gang.objects.all().delete()
    browser.post(f"/admin/scheduler_core/queue/{queue.pk}/delete/", {"post": "yes"})
    assert not Queue.objects.exists()


def test_local_queues_and_flavors_are_saved_through_the_service(browser):
    cq = Queue.objects.create(name="cq")
    response = browser.post(
        "/admin/scheduler_core/localqueue/add/",
        {"namespace": "team", "name": "main", "cluster_queue": str(cq.pk)},
    )
    assert response.status_code == 302
    assert LocalQueue.objects.get().cluster_queue == cq
    response = browser.post(
        "/admin/scheduler_core/resourceflavor/add/", {"name": "a100", "node_labels": '{"gpu": "a100"}'}
    )
    assert response.status_code == 302
    assert ResourceFlavor.objects.get().node_labels == {"gpu": "a100"}
