"""A submitter changes only what they submitted, through every write path.

alice holds ``team-a/trainer`` (a scheduler-plugins PodGroup with two labelled pods). bob, who
gets 404 for it everywhere else, must get the very same 404 from the manifest endpoint and from
``POST /api/v1/gangs/`` whatever he sends about it, and nothing may change. Every change of an
existing gang, by its owner or an operator, is a ``configured`` event saying who and what.
"""

import pytest

from scheduler_core.declarations import manifests_apply
from scheduler_core.declarations.documents import documents_parse
from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.groups import gang_group_join
from tests.cast import make_gang

pytestmark = pytest.mark.django_db

URL = "/api/v1/manifests/"
YAML = "application/yaml"

PODGROUP = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: trainer, namespace: team-a}}
spec: {{minMember: {min_member}, scheduleTimeoutSeconds: {wait}}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: team-a
  labels: {{scheduling.x-k8s.io/pod-group: trainer{extra}}}
spec:
  schedulerName: gangsched
  containers: [{{name: main, image: busybox, resources: {{requests: {{cpu: 100m}}}}}}]
"""
BARE_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: notebook, namespace: team-a, labels: {owner: alice}}
spec:
  schedulerName: gangsched
  containers: [{name: main, image: busybox}]
"""


def podgroup(min_member=2, wait=60) -> str:
    return PODGROUP.format(min_member=min_member, wait=wait)


def pod(name: str, extra: str = "") -> str:
    return POD.format(name=name, extra=extra)


@pytest.fixture
def trainer(as_alice) -> Gang:
    body = "---\n".join([podgroup(), pod("trainer-0"), pod("trainer-1"), BARE_POD])
    response = as_alice.post(URL, body, content_type=YAML)
    assert response.status_code == 201, response.content
    return Gang.objects.get(namespace="team-a", name="trainer")


def snapshot() -> tuple:
    """Everything a refused write must leave as it was."""
    gangs = list(Gang.objects.order_by("id").values())
    members = list(Member.objects.order_by("id").values())
    return gangs, members, GangEvent.objects.count()


def not_found_body(client) -> bytes:
    """What the API answers for a gang that does not exist: the refusal must be exactly this."""
    response = client.get("/api/v1/gangs/team-a/no-such-gang/")
    assert response.status_code == 404
    return response.content


BOBS_ATTEMPTS = {
    "PodGroup named like alice's gang": podgroup(min_member=1, wait=5),
    "Pod labelled with alice's pod-group": pod("bob-joins"),
    "alice's own pod, relabelled": pod("trainer-0", extra=", team: bob"),
    "alice's bare pod, re-applied": BARE_POD.replace("owner: alice", "owner: bob"),
}


@pytest.mark.parametrize("manifest", BOBS_ATTEMPTS.values(), ids=BOBS_ATTEMPTS)
def test_another_submitter_cannot_change_a_gang_or_pod_through_manifests(trainer, as_bob, manifest):
    before = snapshot()
    response = as_bob.post(URL, manifest, content_type=YAML)

    assert response.status_code == 404
    assert response.content == not_found_body(as_bob)  # nothing says the gang exists
    assert snapshot() == before


@pytest.mark.parametrize("manifest", BOBS_ATTEMPTS.values(), ids=BOBS_ATTEMPTS)
def test_a_dry_run_on_another_submitters_gang_or_pod_is_the_same_not_found(trainer, as_bob, manifest):
    """``?dryRun=All`` runs the same checks: bob learns no more from a dry run than from a write."""
    before = snapshot()
    real = as_bob.post(URL, manifest, content_type=YAML)
    dry = as_bob.post(f"{URL}?dryRun=All", manifest, content_type=YAML)
    assert (dry.status_code, dry.content) == (real.status_code, real.content) == (404, not_found_body(as_bob))
    assert snapshot() == before


def test_a_dry_run_on_another_submitters_key_or_pod_name_is_the_same_not_found(trainer, as_bob, as_vera):
    gang = {"namespace": "team-a", "name": "trainer", "minMember": 1, "pods": [{"name": "x-0"}]}
    taken_pod = {**gang, "name": "bobs", "pods": [{"name": "trainer-0"}]}
    before = snapshot()
    for body in (gang, taken_pod):
        real = as_bob.post("/api/v1/gangs/", body, format="json")
        dry = as_bob.post("/api/v1/gangs/?dryRun=All", body, format="json")
        assert (
            (dry.status_code, dry.content)
            == (real.status_code, real.content)
            == (404, not_found_body(as_bob))
        )
    # A viewer is told it exists, in a dry run as in a write.
    real = as_vera.post("/api/v1/gangs/", gang, format="json")
    dry = as_vera.post("/api/v1/gangs/?dryRun=All", gang, format="json")
    assert (dry.status_code, dry.content) == (real.status_code, real.content)
    assert "already exists" in dry.json()["errors"][0]["reason"]
    assert snapshot() == before


def test_a_refused_object_refuses_the_whole_body(trainer, as_bob):
    """bob's own PodGroup in the same body is not created either: all or nothing."""
    body = podgroup().replace("name: trainer", "name: bobs") + "---\n" + pod("bob-joins")
    before = snapshot()
    assert as_bob.post(URL, body, content_type=YAML).status_code == 404
    assert snapshot() == before


def test_submitting_on_another_submitters_key_is_not_found(trainer, as_bob, as_alice, as_vera):
    gang = {"namespace": "team-a", "name": "trainer", "minMember": 1, "pods": [{"name": "x-0"}]}
    before = snapshot()
    response = as_bob.post("/api/v1/gangs/", gang, format="json")
    assert (response.status_code, response.content) == (404, not_found_body(as_bob))
    # A pod name alice holds, under a gang name of bob's own: the same.
    taken_pod = {**gang, "name": "bobs", "pods": [{"name": "trainer-0"}]}
    response = as_bob.post("/api/v1/gangs/", taken_pod, format="json")
    assert (response.status_code, response.content) == (404, not_found_body(as_bob))
    assert snapshot() == before
    # Whoever may see the gang is told it exists.
    for client in (as_alice, as_vera):
        response = client.post("/api/v1/gangs/", gang, format="json")
        assert response.status_code == 400
        assert "already exists" in response.json()["errors"][0]["reason"]


def test_the_owner_changes_their_gang_and_history_says_who_and_what(trainer, as_alice):
    response = as_alice.post(URL, podgroup(min_member=3, wait=90), content_type=YAML)
    assert response.status_code == 201, response.content
    assert "podgroup.scheduling.x-k8s.io/trainer configured" in response.json()["lines"]

    event = GangEvent.objects.filter(gang=trainer, kind="configured").get()
    assert event.details["by"] == "alice"
    assert event.details["changed"]["min_member"] == {"from": 2, "to": 3}
    assert event.details["changed"]["wait_seconds"] == {"from": 60.0, "to": 90.0}
    assert "configured by alice" in event.reason and "min_member 2 -> 3" in event.reason


def test_pods_joining_an_existing_gang_are_recorded(trainer, as_alice):
    assert as_alice.post(URL, pod("trainer-2"), content_type=YAML).status_code == 201
    event = GangEvent.objects.filter(gang=trainer, kind="configured").get()
    assert (event.details["by"], event.details["podsJoined"]) == ("alice", ["trainer-2"])
    assert Member.objects.get(name="trainer-2").submitter == "alice"


def test_reapplying_the_same_manifest_records_nothing(trainer, as_alice):
    before = GangEvent.objects.count()
    assert as_alice.post(URL, podgroup(), content_type=YAML).status_code == 201
    assert GangEvent.objects.count() == before


def test_an_operator_may_change_any_gang_and_is_named(trainer, as_olga):
    response = as_olga.post(URL, podgroup(min_member=1), content_type=YAML)
    assert response.status_code == 201, response.content
    trainer.refresh_from_db()
    assert (trainer.min_member, trainer.submitter) == (1, "alice")  # still alice's gang
    event = GangEvent.objects.filter(gang=trainer, kind="configured").get()
    assert event.details["by"] == "olga"


def test_a_viewer_sees_but_may_not_change(trainer, as_vera):
    before = snapshot()
    response = as_vera.post(URL, podgroup(min_member=1), content_type=YAML)
    assert response.status_code == 403  # she sees the gang: forbidden, as her retry or kill
    assert snapshot() == before


def test_the_cli_changes_any_gang_and_is_recorded_as_cli(trainer):
    """``manage.py apply`` runs on the server: whoever runs it runs the cluster."""
    manifests_apply(documents_parse(podgroup(min_member=4).encode()))
    event = GangEvent.objects.filter(gang=trainer, kind="configured").get()
    assert event.details["by"] == "cli"
    trainer.refresh_from_db()
    assert trainer.min_member == 4


# ---------------------------------------------------------------- explanations across tenants
# A submitter reads no name of another's work in the engine's explanations, but reads the names
# of their own: the rule keys on whether the viewer may see the gang named, not on the reason.


def _blocked_behind(waiting: Gang, head: Gang) -> str:
    message = f"blocked behind {head.key}, which is first in the queue and has capacity reserved"
    details = {"head": head.key, "head_created_later_s": 12.0}
    Gang.objects.filter(pk=waiting.pk).update(reason="BlockedBehind", message=message, details=details)
    GangEvent.objects.create(
        gang=waiting, kind="explained", reason=f"BlockedBehind: {message}", details=details
    )
    return message


def _everything_alice_reads(client, page_client, gang: Gang) -> str:
    """Her gang through every surface that shows its explanation: the API's gang, list and
    events, and the Gangs list, the gang page, the History and the Overview."""
    answers = [
        client.get(f"/api/v1/gangs/{gang.namespace}/{gang.name}/").content,
        client.get("/api/v1/gangs/").content,
        client.get(f"/api/v1/gangs/{gang.namespace}/{gang.name}/events/").content,
        client.get("/api/v1/events/").content,
        *(page_client.get(path).content for path in ("/gangs/", f"/gangs/{gang.namespace}/{gang.name}/")),
        *(page_client.get(path).content for path in ("/history/", "/")),
    ]
    return b"\n".join(answers).decode()


def test_a_submitter_who_owns_both_gangs_reads_the_name(alice, as_alice, client):
    head = make_gang("team-a", "head", submitter="alice")
    waiting = make_gang("team-a", "second", submitter="alice")
    message = _blocked_behind(waiting, head)
    client.force_login(alice)
    text = _everything_alice_reads(as_alice, client, waiting)
    assert message in text.replace("&#x27;", "'")
    answer = as_alice.get("/api/v1/gangs/team-a/second/").json()
    assert answer["explanation"]["details"]["head"] == "team-a/head"


def test_a_submitter_behind_anothers_gang_reads_no_name_and_an_operator_does(
    alice, as_alice, olga, as_olga, client
):
    head = make_gang("team-b", "bobs-head", submitter="bob")
    waiting = make_gang("team-a", "second", submitter="alice")
    message = _blocked_behind(waiting, head)
    client.force_login(alice)
    assert "bobs-head" not in _everything_alice_reads(as_alice, client, waiting)
    answer = as_alice.get("/api/v1/gangs/team-a/second/").json()
    assert set(answer["explanation"]["details"]) == set()  # the head and how much later it came
    # Nor does a search of her gangs by the name find the one whose message holds it.
    assert as_alice.get("/api/v1/gangs/", {"search": "bobs-head"}).json()["results"] == []
    client.force_login(olga)
    assert message in _everything_alice_reads(as_olga, client, waiting).replace("&#x27;", "'")
    assert [g["name"] for g in as_olga.get("/api/v1/gangs/", {"search": "bobs-head"}).json()["results"]] == [
        "second",
        "bobs-head",
    ]


def test_a_gang_group_names_only_the_submitters_own_gangs(alice, as_alice, as_olga, client):
    """A group holding bob's gang (joined through manifests, which take any key): alice reads her
    gang's group progress without his, and the group's key, which lists both, as a sentence."""
    mine = make_gang("team-a", "part-1", submitter="alice")
    make_gang("team-b", "part-2", submitter="bob")
    gang_group_join(gang=mine, members=["team-a/part-1", "team-b/part-2"])
    Gang.objects.filter(namespace="team-b", name="part-2").update(group=mine.group)
    answer = as_alice.get("/api/v1/gangs/team-a/part-1/").json()
    assert [row["gang"] for row in answer["groupProgress"]] == ["team-a/part-1"]
    assert "part-2" not in answer["group"]
    client.force_login(alice)
    for path in ("/gangs/", "/gangs/team-a/part-1/"):
        assert b"part-2" not in client.get(path).content
    operator = as_olga.get("/api/v1/gangs/team-a/part-1/").json()
    assert [row["gang"] for row in operator["groupProgress"]] == ["team-a/part-1", "team-b/part-2"]
    assert operator["group"] == "team-a/part-1,team-b/part-2"
