"""PostgreSQL or Redis restarted while a cycle is in flight: the loop resumes on its own.

A real worker and a real beat run against private servers (tests/faults/servers.py), never the
shared ones. The worker pauses one second between journaling a cycle's binds and binding them
(``GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S``), and the server is crashed while it pauses. Nothing
but beat asks for cycles afterwards: a gang submitted after the restart must be bound, the
journal emptied, and the invariants hold.

Celery 5.7 / kombu 5.7 have a known weakness here: when the Redis connection drops while a
late-acknowledged task is in flight, closing the channel tries to restore the unacknowledged
message over the connection that is gone, and the worker sometimes exits with "Unrecoverable
error: AttributeError('NoneType' object has no attribute 'hostname')" (kombu #582's
shape). In a cluster the worker's Deployment restarts it; the test plays that supervisor and
starts a worker again when its process exited, which the report counts.
"""

import pytest
from django.conf import settings
from django.db import InterfaceError, OperationalError, connections

from scheduler_core.models import BindJournal, BindState, Gang, Member, Node
from tests.loop.factories import GI

from .invariants import assert_invariants, pending_binds
from .processes import Beat, Worker, wait_for
from .servers import DATABASE, PrivatePostgres, PrivateRedis

ALIAS = "private"
# The test database must exist (the private one copies its schema); the tests use ALIAS.
pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "private"])
TABLES = ("bindjournal", "gangevent", "schedulingcycle", "member", "gang", "node", "schedulerlease")


@pytest.fixture(scope="module")
def servers(django_db_setup):
    try:
        postgres = PrivatePostgres()
    except FileNotFoundError as error:
        pytest.skip(f"no PostgreSQL server binaries for a private server: {error}")
    redis_server = None
    try:
        test_db = settings.DATABASES["default"]  # renamed to the test database by django_db_setup
        postgres.load_schema(
            f"postgres://{test_db['USER']}@{test_db['HOST']}:{test_db['PORT']}/{test_db['NAME']}"
        )
        redis_server = PrivateRedis()
        # Registered before pytest-django sets each test up, which then allows it (pytestmark).
        connections.settings[ALIAS] = {
            **connections.settings["default"],
            **{"NAME": DATABASE, "HOST": "127.0.0.1", "PORT": postgres.port, "CONN_MAX_AGE": 0},
        }
        yield postgres, redis_server
    finally:
        if ALIAS in connections.settings:
            connections[ALIAS].close()
            del connections.settings[ALIAS]
        if redis_server is not None:
            redis_server.close()
        postgres.close()


@pytest.fixture
def loop(servers, tmp_path):
    """A worker and a beat on the private servers, and an empty private database."""
    postgres, redis_server = servers
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("TRUNCATE " + ", ".join(f"scheduler_core_{t}" for t in TABLES) + " CASCADE")
    env = {"DATABASE_URL": postgres.url, "REDIS_URL": redis_server.url}
    supervisor = Supervisor(
        lambda: Worker("private", concurrency=2, GANGSCHED_FAULT_PAUSE_AFTER_JOURNAL_S="1", **env),
        lambda: Beat("private", tmp_path, GANGSCHED_CYCLE_INTERVAL_S="0.5", **env),
    )
    try:
        yield postgres, redis_server, supervisor
    finally:
        supervisor.stop()


class Supervisor:
    """Starts the processes and starts again any that exited (a Deployment's restartPolicy)."""

    def __init__(self, *factories) -> None:
        self.factories = factories
        self.processes = [factory() for factory in factories]
        self.restarts = 0

    def revive(self) -> None:
        for index, process in enumerate(self.processes):
            if process.process.poll() is not None:
                self.processes[index] = self.factories[index]()
                self.restarts += 1

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


def ask(query):
    """``query()`` on the private database; None while it is unreachable (the next call reconnects)."""
    try:
        return query()
    except (OperationalError, InterfaceError):
        connections[ALIAS].close()
        return None


def submit(key: str, size: int) -> Gang:
    namespace, name = key.split("/")
    gang = Gang.objects.using(ALIAS).create(namespace=namespace, name=name, min_member=size)
    Member.objects.using(ALIAS).bulk_create(
        Member(namespace=namespace, name=f"{name}-{i}", gang=gang, requests={"cpu": 1000, "memory": GI})
        for i in range(size)
    )
    return gang


def in_flight() -> bool:
    return bool(pending_binds(ALIAS))


def all_bound() -> bool:
    members = Member.objects.using(ALIAS)
    return not in_flight() and members.exists() and not members.filter(node__isnull=True).exists()


def crash_mid_cycle_then_submit_again(server, supervisor: Supervisor) -> None:
    Node.objects.using(ALIAS).bulk_create(
        Node(name=f"n{i}", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 110}) for i in range(2)
    )
    submit("team/before", 3)
    wait_for(lambda: ask(in_flight), timeout=90, interval=0.05, what="a cycle between journal and bind")
    server.restart()
    wait_for(lambda: ask(lambda: submit("team/after", 3)), timeout=30, what="the database to take a gang")

    def resumed() -> bool:
        supervisor.revive()
        return ask(all_bound)

    wait_for(resumed, timeout=120, interval=0.5, what="both gangs to be bound")
    assert_invariants(using=ALIAS, idle=True)
    bound = BindJournal.objects.using(ALIAS).filter(state=BindState.BOUND)
    assert bound.count() == bound.values("member").distinct().count() == 6


@pytest.mark.timeout(300)
def test_postgres_restarted_during_a_cycle(loop):
    postgres, _, supervisor = loop
    crash_mid_cycle_then_submit_again(postgres, supervisor)
    assert supervisor.restarts == 0  # the worker reconnects to PostgreSQL by itself


@pytest.mark.timeout(300)
def test_redis_restarted_during_a_cycle(loop):
    _, redis_server, supervisor = loop
    crash_mid_cycle_then_submit_again(redis_server, supervisor)
    print(f"processes restarted after the Redis restart: {supervisor.restarts}")
