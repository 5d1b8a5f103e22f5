"""The authorization matrix: every route the URL conf serves x every method it takes x every
role, one real request per cell against the real database, checked against the one table of
tests/security/matrix_table.py. The routes come from the resolver (tests/security/urlmatrix.py),
so an endpoint, method or admin model added later fails ``test_the_table_covers_every_route``
until the table says who may call it, and a row naming a route that is gone fails it too.

What each cell checks is in tests/security/matrix_checks.py: the status; another's gang answers
the bytes a gang that does not exist gets; a denied write changes no row; bob never reads alice's
gang's name. The websocket's cells are in test_matrix_sockets.py, the admin's gang actions in
test_matrix_admin.py. The last test reports the count of cells and of denials.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from dashboard import health
from dashboard.models import SimulationRun
from dashboard.simulations import plot_dir
from scheduler_core.models import Gang, Node, Queue, QueueAccess, Topology
from tests.cast import make_gang
from tests.security import matrix_tally
from tests.security.matrix_checks import (
    BOBS_GANG,
    ask,
    check_outcome,
    explanations_for_the_matrix,
    forecasts_for_the_matrix,
    rows_snapshot,
)
from tests.security.matrix_requests import PARAMS, PARAMS_BY_KEY, QUEUE, TOPOLOGY, client, send
from tests.security.matrix_table import ROLES, SECRET, TABLE, admin_expect, unserved_expect
from tests.security.urlmatrix import METHODS, endpoints

pytestmark = pytest.mark.django_db

ENDPOINTS = {endpoint.key: endpoint for endpoint in endpoints()}
ADMIN = [endpoint for endpoint in ENDPOINTS.values() if endpoint.is_admin]
PLOT = PARAMS_BY_KEY["dashboard:simulation-plot"]["name"]


@pytest.fixture
def world(alice, bob, vera, olga, monkeypatch, tmp_path) -> dict:
    """alice's gang (timed out, so retry and kill apply), a node, a queue only alice may submit
    to with another gang of hers waiting in it behind one of bob's, both forecast, each
    forecast's explanation and each gang's explanation and history naming the other's gang, a
    topology, a simulation run with a plot.
    /healthz's worker ping would wait a second for a worker the tests do not run: one answers."""
    gang = make_gang("ml", SECRET, submitter="alice")
    Gang.objects.filter(pk=gang.pk).update(phase="TimedOut")
    Node.objects.create(name="n1", allocatable={"cpu": 4000, "memory": 8 * 2**30})
    QueueAccess.objects.create(queue=Queue.objects.create(name=QUEUE), user=alice)  # alice's alone
    # A gang of alice's waiting in a queue of hers that the matrix leaves alone (matrix-queue is
    # deleted by one of its cells): the Queues page's lanes list it.
    QueueAccess.objects.create(queue=Queue.objects.create(name=f"{QUEUE}-lane"), user=alice)
    # bob's gang first: it waits ahead of alice's in the lane, as the head she is blocked behind.
    bobs = make_gang("team-b", BOBS_GANG, submitter="bob", queue=f"{QUEUE}-lane")
    waits = make_gang("ml", f"{SECRET}-waits", submitter="alice", queue=f"{QUEUE}-lane")
    forecasts_for_the_matrix(waits, bobs)
    explanations_for_the_matrix([gang, waits], bobs)
    Topology.objects.create(name=TOPOLOGY, levels=["example.com/rack"])
    monkeypatch.setenv("GANGSCHED_SIMULATIONS_DIR", str(tmp_path))
    run = SimulationRun.objects.create(
        trace_name="t.csv", cluster_spec="n32g4", policies=["pod"], requested_by=olga, plots=[PLOT]
    )
    plot_dir(run).mkdir(parents=True)
    (plot_dir(run) / PLOT).write_bytes(b"\x89PNG\r\n\x1a\n")
    monkeypatch.setattr(health, "check_celery", lambda: health.CheckResult(True, {"workers": ["matrix"]}))
    users = {"anonymous": None, "alice": alice, "bob": bob, "vera": vera, "olga": olga}
    return {"gang": gang, "users": users, "params": {**PARAMS, "pk": str(run.pk)}}


def cell_name(key: str, method: str, case: str, role: str) -> str:
    return f"{key} {method} {case} {role}"


def _rows():
    """One test per row, its roles asked in turn."""
    for row in TABLE:
        yield pytest.param(
            row, tuple(role for role, _ in row.cells()), id=f"{row.key}-{row.method}-{row.case}"
        )


@pytest.mark.parametrize(("row", "roles"), list(_rows()))
def test_row(world, row, roles):
    """Each role's cell in a savepoint rolled back after it: every role meets the same world."""
    failures = []
    for role in roles:
        cell = cell_name(row.key, row.method, row.case, role)
        matrix_tally.asked(cell, row.expect[role])
        try:
            with transaction.atomic():
                ask(ENDPOINTS[row.key], row, role, world)
                transaction.set_rollback(True)
        except AssertionError as error:
            failures.append(f"{role}: expected {row.expect[role]!r}: {error}")
        else:
            matrix_tally.answered(cell)
    assert failures == [], "\n".join(failures)


def test_the_table_covers_every_route():
    """Every (route, method) the URL conf serves has a row, and every row a route that exists."""
    served = {(e.key, m) for e in ENDPOINTS.values() if not e.is_admin for m in e.methods}
    listed = {(row.key, row.method) for row in TABLE}
    assert served - listed == set(), "routes or methods the table does not cover"
    assert listed - served == set(), "rows of routes or methods the URL conf no longer serves"
    cases = [(row.key, row.method, row.case) for row in TABLE]
    assert len(cases) == len(set(cases)), "a row is listed twice"
    assert ADMIN and all(e.methods == ("GET", "POST") for e in ADMIN)


@pytest.mark.parametrize("role", ROLES)
def test_admin(world, role):
    """Every admin route and method (the admin has one rule, matrix_table.admin_expect): only
    staff pass its gate, and nothing is written by anyone the gate stops."""
    user = world["users"][role]
    before = rows_snapshot()
    failures = []
    browser = None
    for endpoint in ADMIN:
        for method in endpoint.methods:
            outcome = admin_expect(endpoint.key, method)[role]
            cell = cell_name(endpoint.key, method, "default", role)
            matrix_tally.asked(cell, outcome)
            browser = browser or client(endpoint, user)  # one session, until a sign-out ends it
            response = send(endpoint, method, browser, world["params"], {})
            if endpoint.key == "admin:logout":
                browser = None
            try:
                check_outcome(endpoint, outcome, response)
            except AssertionError as error:
                failures.append(f"{method} {endpoint.route}: expected {outcome!r}: {error}")
            else:
                matrix_tally.answered(cell)
    assert failures == [], "\n".join(failures)
    if role != "olga":
        assert rows_snapshot() == before


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS.values() if not e.is_admin], ids=lambda e: e.key)
def test_other_methods_are_refused(world, endpoint):
    """A method a route does not serve is refused, even to an operator, and writes nothing."""
    before = rows_snapshot()
    outcome = unserved_expect(endpoint.key)
    browser = client(endpoint, world["users"]["olga"])
    for method in sorted(set(METHODS) - set(endpoint.methods)):
        cell = cell_name(endpoint.key, method, "unserved", "olga")
        matrix_tally.asked(cell, outcome)
        response = send(endpoint, method, browser, world["params"], {})
        assert response.status_code in outcome.statuses, (method, endpoint.route, response.status_code)
        matrix_tally.answered(cell)
    assert rows_snapshot() == before


def test_the_matrix_report():
    """Last in the file: once every cell of the table has been asked, every expected denial was
    a denial (a cell that failed was asked but not answered, and shows here)."""
    tally = matrix_tally.TALLY
    table = {cell_name(row.key, row.method, row.case, role) for row in TABLE for role, _ in row.cells()}
    if not table <= tally.cells:
        pytest.skip("a partial run: the report needs the whole table")
    assert tally.denials <= tally.passed, tally.line()
