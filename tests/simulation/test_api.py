"""/api/v1/simulations/: list and read for everybody signed in, start for operators only."""

import pytest

from dashboard.models import SimulationRun
from tests.api.conftest import client_for

from .helpers import JOB_A_JOB_B, LEAST_WORK, ONE_NODE, THREE_NODES

pytestmark = pytest.mark.django_db
URL = "/api/v1/simulations/"


def test_an_operator_starts_a_run_on_a_shared_trace(olga, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client_for(olga).post(
            URL,
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "policies": ["gangsched", "pod"]},
            format="json",
        )
    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["status"], body["trace"], body["cluster"]) == ("queued", "tiresias-60-jobs.csv", "n32g4")
    assert body["policies"] == ["gangsched", "pod"] and body["requested_by"] == "olga"
    run = SimulationRun.objects.get(pk=body["id"])
    assert run.trace_text == "" and run.requested_by == olga
    assert len(callbacks) == 1  # the task is queued once the row is committed


def test_an_uploaded_csv_is_kept_with_the_run_and_all_policies_by_default(olga):
    response = client_for(olga).post(
        URL, {"trace_csv": JOB_A_JOB_B, "trace_name": "ab.csv", "cluster": THREE_NODES}, format="json"
    )
    assert response.status_code == 202
    run = SimulationRun.objects.get(pk=response.json()["id"])
    assert run.trace_text == JOB_A_JOB_B and run.trace_name == "ab.csv"
    assert run.policies == ["pod", "coscheduling", "nonstrict", "fifo-gang", "gangsched"]


def test_a_submitter_may_list_and_read_but_not_start(alice, olga):
    run = SimulationRun.objects.create(
        trace_name="t.csv", cluster_spec="n32g4", policies=["pod"], requested_by=olga
    )
    client = client_for(alice)
    response = client.post(URL, {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4"}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"][0]["reason"] == "Only operators may start simulations."
    assert SimulationRun.objects.count() == 1
    listed = client.get(URL).json()
    assert [item["id"] for item in listed["results"]] == [run.pk]
    detail = client.get(f"{URL}{run.pk}/")
    assert detail.status_code == 200 and detail.json()["requested_by"] == "olga"
    assert client.get(f"{URL}{run.pk + 1}/").status_code == 404


def test_anonymous_users_get_401():
    assert client_for(None).get(URL).status_code == 401


@pytest.mark.parametrize(
    ("payload", "field", "reason"),
    [
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "3x{gpu}"},
            "cluster",
            "group 1: 'gpu' is not resource=amount",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "0x{cpu=1}"},
            "cluster",
            "node count must be at least 1",
        ),
        ({"trace": "nope.csv", "cluster": "n32g4"}, "trace", "unknown shared trace 'nope.csv'"),
        (
            {"trace": "alibaba-openb-gpu-nodes-sample.csv", "cluster": "n32g4"},
            "trace",
            "unknown shared trace",
        ),
        ({"cluster": "n32g4"}, "trace", "give either a shared trace or an uploaded CSV"),
        ({"trace_csv": "job_id,submit_s\n", "cluster": "n32g4"}, "trace_csv", "line 1: unknown header"),
        (
            {"trace_csv": JOB_A_JOB_B.replace("A,3,2,2", "A,3,2,x"), "cluster": "n32g4"},
            "trace_csv",
            "line 5: min_workers must be a whole number, got 'x'",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "policies": ["slurm"]},
            "policies[0]",
            "slurm",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "overtake_limit_s": -1},
            "overtake_limit_s",
            "greater than or equal to 0",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "overtake_limit_s": "soon"},
            "overtake_limit_s",
            "A valid number is required",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "overtake_limit_s": 1e13},
            "overtake_limit_s",
            "less than or equal to",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "runtimes": "psychic"},
            "runtimes",
            '"psychic" is not a valid choice.',
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "runtimes": None},
            "runtimes",
            "may not be null",
        ),
        (
            {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "runtimes": ["limit"]},
            "runtimes",
            "is not a valid choice",
        ),
    ],
)
def test_bad_input_is_a_400_with_the_field_and_the_reason(olga, payload, field, reason):
    response = client_for(olga).post(URL, payload, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors[0]["field"] == field
    assert reason in errors[0]["reason"]
    assert not SimulationRun.objects.exists()


def test_an_operator_sets_gangsched_s_overtake_limit_for_a_run(olga):
    client = client_for(olga)
    response = client.post(
        URL,
        {"trace_csv": LEAST_WORK, "cluster": ONE_NODE, "policies": ["gangsched"], "overtake_limit_s": 0},
        format="json",
    )
    assert response.status_code == 202, response.json()
    assert response.json()["overtake_limit_s"] == 0.0
    assert SimulationRun.objects.get(pk=response.json()["id"]).overtake_limit_s == 0.0
    default = client.post(URL, {"trace_csv": LEAST_WORK, "cluster": ONE_NODE}, format="json").json()
    assert default["overtake_limit_s"] is None  # the engine's default


@pytest.mark.parametrize("mode", ["oracle", "limit", "learned"])
def test_an_operator_chooses_what_the_replay_tells_the_engine_of_runtimes(olga, mode):
    client = client_for(olga)
    response = client.post(
        URL, {"trace_csv": LEAST_WORK, "cluster": ONE_NODE, "runtimes": mode}, format="json"
    )
    assert response.status_code == 202, response.json()
    assert response.json()["runtimes"] == mode
    run = SimulationRun.objects.get(pk=response.json()["id"])
    assert run.runtimes == mode
    assert client.get(f"{URL}{run.pk}/").json()["runtimes"] == mode


def test_without_runtimes_a_run_replays_with_the_trace_s_exact_ones(olga):
    response = client_for(olga).post(URL, {"trace_csv": LEAST_WORK, "cluster": ONE_NODE}, format="json")
    assert response.status_code == 202
    assert response.json()["runtimes"] == "oracle"
    assert SimulationRun.objects.get().runtimes == "oracle"
