"""GET /api/v1/gangs/ (filters, pagination, visibility), the detail and the gang's events."""

from scheduler_core.models import Gang, GangEvent, Member
from scheduler_core.services.groups import gang_group_join

from .conftest import make_gang

URL = "/api/v1/gangs/"


def names(response) -> list[str]:
    assert response.status_code == 200, response.content
    return sorted(gang["key"] for gang in response.json()["results"])


def world():
    make_gang("ml", "train", submitter="alice")
    make_gang("ml", "eval", submitter="alice", queue="fast")
    make_gang("etl", "nightly", submitter="bob")
    make_gang("etl", "hourly", submitter="alice", pods=1)


def test_a_submitter_lists_only_their_own_gangs(as_alice, as_bob):
    world()
    assert names(as_alice.get(URL)) == ["etl/hourly", "ml/eval", "ml/train"]
    assert names(as_bob.get(URL)) == ["etl/nightly"]


def test_an_operator_lists_every_gang(as_olga):
    world()
    assert names(as_olga.get(URL)) == ["etl/hourly", "etl/nightly", "ml/eval", "ml/train"]


def test_filters_by_phase_state_namespace_queue_submitter_and_text(as_olga):
    world()
    Member.objects.filter(gang__name="nightly").update(phase="Running")
    Gang.objects.filter(name="nightly").update(phase="Running")
    Gang.objects.filter(name="eval").update(message="InsufficientResources: short by 3 gpus")

    assert names(as_olga.get(URL, {"phase": "Running"})) == ["etl/nightly"]
    assert names(as_olga.get(URL, {"state": "Pending"})) == ["etl/hourly", "ml/eval", "ml/train"]
    assert names(as_olga.get(URL + "?phase=Running&phase=Pending")) == names(as_olga.get(URL))
    assert names(as_olga.get(URL, {"namespace": "etl"})) == ["etl/hourly", "etl/nightly"]
    assert names(as_olga.get(URL, {"queue": "fast"})) == ["ml/eval"]
    assert names(as_olga.get(URL, {"submitter": "bob"})) == ["etl/nightly"]
    assert names(as_olga.get(URL, {"search": "gpus"})) == ["ml/eval"]
    assert names(as_olga.get(URL, {"search": "HOUR"})) == ["etl/hourly"]


def test_an_unknown_phase_is_a_400_naming_the_filter(as_olga):
    response = as_olga.get(URL, {"phase": "Sleeping"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "phase"


def test_pages_are_keyset_pages_with_a_size_parameter_and_a_maximum(as_olga):
    """Cursor pages (dashboard/api/pagination.py): newest first, ``next`` and ``previous`` links
    carry an opaque cursor, no page numbers and no count; a cursor that does not decode is 404."""
    for i in range(5):
        make_gang("ml", f"g{i}", pods=1)
    page = as_olga.get(URL, {"pageSize": 2}).json()
    assert set(page) == {"next", "previous", "results"} and page["previous"] is None
    assert [g["name"] for g in page["results"]] == ["g4", "g3"]
    assert "cursor=" in page["next"] and "pageSize=2" in page["next"]
    names = []
    while True:
        names += [g["name"] for g in page["results"]]
        if page["next"] is None:
            break
        page = as_olga.get(page["next"]).json()
    assert names == ["g4", "g3", "g2", "g1", "g0"]
    back = as_olga.get(page["previous"]).json()
    assert [g["name"] for g in back["results"]] == ["g2", "g1"]
    assert len(as_olga.get(URL, {"pageSize": 9999}).json()["results"]) == 5  # at most 500
    assert as_olga.get(URL, {"cursor": "not-a-cursor"}).status_code == 404


def test_a_page_continues_where_the_last_ended_when_gangs_arrive_meanwhile(as_olga):
    for i in range(4):
        make_gang("ml", f"g{i}", pods=1)
    first = as_olga.get(URL, {"pageSize": 2}).json()
    make_gang("ml", "newer", pods=1)  # page numbers would repeat g2 on the next page
    second = as_olga.get(first["next"]).json()
    assert [g["name"] for g in second["results"]] == ["g1", "g0"]


def test_the_detail_has_progress_members_explanation_and_history(as_alice):
    gang = make_gang("ml", "train", pods=3, min_member=2, wait_seconds=60)
    Member.objects.filter(name="train-0").update(node="n1", phase="Running")
    Member.objects.filter(name="train-1").update(reserved_node="n2")
    gang.reason, gang.message, gang.details = "InsufficientResources", "short by 1", {"short": 1}
    gang.save()

    body = as_alice.get("/api/v1/gangs/ml/train/").json()

    assert body["progress"] == {"members": 3, "bound": 1, "reserved": 1, "pending": 2, "minMember": 2}
    assert body["explanation"] == {
        "reason": "InsufficientResources",
        "message": "short by 1",
        "details": {"short": 1},
    }
    assert [(m["name"], m["node"], m["reservedNode"], m["phase"]) for m in body["members"]] == [
        ("train-0", "n1", None, "Running"),
        ("train-1", None, "n2", "Pending"),
        ("train-2", None, None, "Pending"),
    ]
    assert [e["kind"] for e in body["history"]] == ["created"]
    assert body["groupProgress"] == [] and body["waitSeconds"] == 60


def test_the_detail_shows_the_gang_groups_progress(as_alice, as_olga):
    gang = make_gang("ns-a", "ps")
    gang_group_join(gang=gang, members=["ns-b/worker"])
    progress = as_olga.get("/api/v1/gangs/ns-a/ps/").json()["groupProgress"]
    assert progress == [
        {"gang": "ns-a/ps", "state": "Pending", "minMember": 2, "bound": 0},
        {"gang": "ns-b/worker", "state": "NotSubmitted", "minMember": None, "bound": 0},
    ]
    # Its submitter is shown the gangs of the group that are hers: a key no gang has yet may
    # be another's to submit (scheduler_core/reads/redaction.py).
    progress = as_alice.get("/api/v1/gangs/ns-a/ps/").json()["groupProgress"]
    assert progress == [{"gang": "ns-a/ps", "state": "Pending", "minMember": 2, "bound": 0}]


def test_other_peoples_gangs_are_404_to_a_submitter_and_visible_to_an_operator(as_bob, as_olga):
    make_gang("ml", "train", submitter="alice")
    assert as_bob.get("/api/v1/gangs/ml/train/").status_code == 404
    assert as_bob.get("/api/v1/gangs/ml/train/events/").status_code == 404
    assert as_olga.get("/api/v1/gangs/ml/train/").json()["submitter"] == "alice"
    missing = as_olga.get("/api/v1/gangs/ml/nope/")
    assert missing.status_code == 404 and missing.json()["errors"][0]["field"] is None


def test_a_gangs_events_newest_first(as_alice):
    gang = make_gang("ml", "train")
    GangEvent.objects.create(gang=gang, kind="explained", reason="waiting")
    body = as_alice.get("/api/v1/gangs/ml/train/events/").json()
    assert [e["kind"] for e in body["results"]] == ["explained", "created"]
    assert body["results"][0]["gang"] == "ml/train"


def test_a_path_no_api_route_matches_is_a_json_404_and_pages_keep_djangos(as_olga):
    for path in ("/api/v1/simulations/null,null/", "/api/v1/nothing-here/", "/api/v2/gangs/"):
        response = as_olga.get(path)
        assert response.status_code == 404, path
        assert response["Content-Type"] == "application/json", path
        assert response.json() == {"errors": [{"field": None, "reason": "Not found."}]}, path
    page = as_olga.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_gangs_say_their_expected_runtime_and_its_source(as_alice, as_olga, settings):
    settings.GANGSCHED_DEFAULT_RUNTIME_S = 900
    make_gang("ml", "train", pods=1)
    make_gang("ml", "said", pods=1)
    Member.objects.filter(name="said-0").update(duration_seconds=30)
    from scheduler_core.services.runtimes import gang_estimates_refresh

    gang_estimates_refresh(Gang.objects.values_list("id", flat=True))
    body = as_alice.get("/api/v1/gangs/ml/train/").json()
    assert (body["expectedRuntimeSeconds"], body["expectedRuntimeSource"]) == (900, "default")
    listed = {g["name"]: g for g in as_olga.get(URL).json()["results"]}
    assert (listed["said"]["expectedRuntimeSeconds"], listed["said"]["expectedRuntimeSource"]) == (
        30,
        "declared",
    )
    settings.GANGSCHED_DEFAULT_RUNTIME_S = None
    gang_estimates_refresh(Gang.objects.values_list("id", flat=True))
    body = as_alice.get("/api/v1/gangs/ml/train/").json()
    assert (body["expectedRuntimeSeconds"], body["expectedRuntimeSource"]) == (None, None)
