"""/simulations/: the list with its form (operators), form errors, a run's detail and its plots."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from dashboard.models import SimulationRun
from dashboard.simulations import simulation_run_execute
from scheduler_core.simulation import DEFAULT_QUEUES
from scheduler_core.simulation.trace_files import REPOSITORY_TRACES
from tests.pages.conftest import login

from .helpers import JOB_A_JOB_B, ONE_NODE, THREE_NODES
from .test_queues import FLOOD, NODE
from .test_runtimes import ABSURD

pytestmark = pytest.mark.django_db
URL = "/simulations/"


def test_a_submitter_sees_the_runs_but_no_form(alice, olga):
    SimulationRun.objects.create(
        trace_name="mine.csv", cluster_spec="n32g4", policies=["pod"], progress=0.4, requested_by=olga
    )
    page = login(alice).get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Only operators may start simulations" in html and '<form class="simulation-form"' not in html
    assert "mine.csv" in html and 'aria-valuenow="40"' in html
    assert login(alice).post(URL, {"cluster": "n32g4"}).status_code == 403


def test_an_operator_sees_the_form_with_the_repository_s_traces(olga):
    html = login(olga).get(URL).content.decode()
    assert '<form class="simulation-form"' in html
    assert '<option value="tiresias-60-jobs.csv">' in html
    assert (REPOSITORY_TRACES / "alibaba-openb-gpu-nodes-sample.csv").is_file()
    assert "alibaba-openb-gpu-nodes-sample.csv</option>" not in html  # a node list, not a job trace


def test_form_errors_are_shown_next_to_their_field(olga):
    page = login(olga).post(
        URL, {"trace": "tiresias-60-jobs.csv", "cluster": "2x{cpu=}", "policies": ["pod"]}
    )
    assert page.status_code == 400
    assert "group 1: &#x27;cpu=&#x27; is not resource=amount" in page.content.decode()
    bad = SimpleUploadedFile("bad.csv", JOB_A_JOB_B.replace("B,4,3,3", "B,4,3,9").encode())
    page = login(olga).post(URL, {"trace_file": bad, "cluster": "n32g4", "policies": ["pod"]})
    assert page.status_code == 400
    assert "line 6: min_workers (9) is larger than workers (3)" in page.content.decode()
    assert not SimulationRun.objects.exists()


def test_an_operator_starts_a_run_with_an_upload_and_lands_on_its_page(olga):
    upload = SimpleUploadedFile("ab.csv", JOB_A_JOB_B.encode())
    response = login(olga).post(
        URL, {"trace_file": upload, "cluster": THREE_NODES, "policies": ["pod", "gangsched"]}
    )
    run = SimulationRun.objects.get()
    assert response.status_code == 302 and response.url == f"/simulations/{run.pk}/"
    assert (run.trace_name, run.trace_text, run.policies) == ("ab.csv", JOB_A_JOB_B, ["pod", "gangsched"])
    assert run.overtake_limit_s is None  # left empty: gangsched's default


def test_an_operator_sets_the_overtake_limit_and_a_bad_one_is_a_form_error(olga):
    form = {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "policies": ["gangsched"]}
    page = login(olga).post(URL, {**form, "overtake_limit_s": "-5"})
    assert page.status_code == 400
    assert "Ensure this value is greater than or equal to 0.0." in page.content.decode()
    assert not SimulationRun.objects.exists()
    response = login(olga).post(URL, {**form, "overtake_limit_s": "600"})
    assert response.status_code == 302
    assert SimulationRun.objects.get().overtake_limit_s == 600.0


def test_an_operator_chooses_the_runtimes_and_a_bad_choice_is_a_form_error(olga):
    client = login(olga)
    html = client.get(URL).content.decode()
    for mode in ("oracle", "limit", "learned"):
        assert f'name="runtimes" value="{mode}"' in html
    assert 'value="oracle" id="id_runtimes_0" checked' in html  # the default is checked
    form = {"trace": "tiresias-60-jobs.csv", "cluster": "n32g4", "policies": ["gangsched"]}
    page = client.post(URL, {**form, "runtimes": "psychic"})
    assert page.status_code == 400
    assert "Select a valid choice. psychic is not one of the available choices." in page.content.decode()
    assert not SimulationRun.objects.exists()
    assert client.post(URL, {**form, "runtimes": "learned"}).status_code == 302
    assert client.post(URL, form).status_code == 302  # none chosen: the trace's exact runtimes
    assert list(SimulationRun.objects.order_by("pk").values_list("runtimes", flat=True)) == [
        "learned",
        "oracle",
    ]


def test_the_list_and_a_run_s_page_show_its_runtimes(alice):
    """A learned run's page says so and adds what the estimates were worth (ABSURD: one user's
    three runs of one job; the first starts on its limit, the next two on what was learned)."""
    run = SimulationRun.objects.create(
        trace_name="absurd.csv",
        trace_text=ABSURD,
        cluster_spec=ONE_NODE,
        policies=["gangsched", "fifo-gang"],
        runtimes="learned",
    )
    simulation_run_execute(run.pk)
    client = login(alice)
    assert '<td class="simulation-runtimes">learned</td>' in client.get(URL).content.decode()
    html = client.get(f"/simulations/{run.pk}/").content.decode()
    assert "Runtimes the scheduler was told: <strong>learned</strong>" in html
    assert '<tr><th scope="row">Starts on a learned estimate</th><td>66.7%</td><td>66.7%</td></tr>' in html
    assert '<tr><th scope="row">Starts on the limit</th><td>33.3%</td><td>33.3%</td></tr>' in html
    assert '<th scope="row">Heads late / started as head</th><td>' in html  # gangsched's alone
    oracle = SimulationRun.objects.create(
        trace_name="absurd.csv", trace_text=ABSURD, cluster_spec=ONE_NODE, policies=["gangsched"]
    )
    simulation_run_execute(oracle.pk)
    html = client.get(f"/simulations/{oracle.pk}/").content.decode()
    assert "Runtimes the scheduler was told: <strong>oracle</strong> (the trace's exact ones)" in html
    assert "Starts on a learned estimate" not in html  # exact runtimes: nothing to judge


def test_a_finished_run_shows_the_policies_side_by_side_and_serves_its_plots(alice):
    run = SimulationRun.objects.create(
        trace_name="ab.csv", trace_text=JOB_A_JOB_B, cluster_spec=THREE_NODES, policies=["pod", "gangsched"]
    )
    simulation_run_execute(run.pk)
    client = login(alice)
    html = client.get(f"/simulations/{run.pk}/").content.decode()
    assert "<th>pod</th><th>gangsched</th>" in html
    assert '<tr><th scope="row">Deadlocked jobs</th><td>2</td><td>0</td></tr>' in html
    # B (3 x 3 GPUs) never starts under pod; gangsched backfills it at t=102, 98 s after submission.
    assert '<tr><th scope="row">Avg wait, jobs of 9-64 (s)</th><td>—</td><td>98.0</td></tr>' in html
    assert '<tr><th scope="row">Queue overtake limit (s)</th><td>0.0</td><td>3,600.0</td></tr>' in html
    assert f'src="/simulations/{run.pk}/plots/utilization.png"' in html
    plot = client.get(f"/simulations/{run.pk}/plots/jct.png")
    assert plot.status_code == 200 and plot["Content-Type"] == "image/png"
    assert b"".join(plot.streaming_content)[:4] == b"\x89PNG"
    assert client.get(f"/simulations/{run.pk}/plots/secret.txt").status_code == 404


def test_a_run_with_queue_policies_shows_fairness_reclaim_and_each_queue(alice):
    """The queue policies run with the default tree; the page adds fairness, reclaim and, per
    queue, waits and time below guarantee. Without queues nlp's jobs wait 990 s behind dev's."""
    flood = FLOOD.replace(",b\n", ",dev\n").replace(",a\n", ",nlp\n")
    run = SimulationRun.objects.create(
        trace_name="flood.csv",
        trace_text=flood,
        cluster_spec=NODE,
        policies=["gangsched-queues", "no-queues"],
    )
    simulation_run_execute(run.pk)
    run.refresh_from_db()
    assert run.results["queues"] == DEFAULT_QUEUES
    html = login(alice).get(f"/simulations/{run.pk}/").content.decode()
    assert '<tr><th scope="row">Fairness (Jain&#x27;s index, time avg)</th>' in html
    assert '<tr><th scope="row">Reclaim evictions</th><td>' in html
    assert "<th>no-queues</th><th>gangsched-queues</th>" in html  # results as PostgreSQL's jsonb orders them
    # nlp's second job would take it beyond its guarantee: it waits for the first (50 s on average)
    assert '<tr><th scope="row">Queue nlp: avg wait (s)</th><td>990.0</td><td>50.0</td></tr>' in html
    assert '<th scope="row">Queue dev: below guarantee with demand</th>' in html


def test_the_form_offers_the_topology_policy_and_a_run_shows_where_gangs_landed(alice, olga):
    """gangsched-topology is offered; a run's page adds, per policy, how many gangs
    that may span nodes started, the share inside one rack/block, the racks spanned, their wait."""
    assert 'value="gangsched-topology"' in login(olga).get(URL).content.decode()
    run = SimulationRun.objects.create(
        trace_name="ab.csv",
        trace_text=JOB_A_JOB_B,
        cluster_spec=THREE_NODES,
        policies=["gangsched", "gangsched-topology"],
    )
    simulation_run_execute(run.pk)
    html = login(alice).get(f"/simulations/{run.pk}/").content.decode()
    # R, Q, A and B each ask more than one node holds; three nodes are one rack of one block.
    assert '<tr><th scope="row">Gangs that may span nodes: started</th><td>4</td><td>4</td></tr>' in html
    assert (
        '<tr><th scope="row">Gangs that may span nodes: inside one rack</th>'
        "<td>100.0%</td><td>100.0%</td></tr>" in html
    )
    assert '<th scope="row">Multi-node gangs: avg racks spanned</th>' in html
