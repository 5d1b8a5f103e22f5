import uuid

import psycopg
from django.conf import settings

from scheduler_core.db import bootstrap as dbsetup


def test_it_creates_a_missing_database_once():
    db = settings.DATABASES["default"]
    name = f"gangsched_ensure_{uuid.uuid4().hex[:8]}"
    try:
        assert dbsetup.create_database_if_missing(db, name) is True
        assert dbsetup.create_database_if_missing(db, name) is False
    finally:
        dbsetup.drop_database(db, name)


def test_it_says_nothing_when_services_answer():
    assert dbsetup.services_problem(settings.DATABASES["default"], settings.REDIS_URL) is None


def test_it_names_each_service_that_is_down_and_how_to_start_it_on_one_line():
    db = {**settings.DATABASES["default"], "HOST": "127.0.0.1", "PORT": "1"}

    problem = dbsetup.services_problem(db, "redis://127.0.0.1:1/0")

    assert "\n" not in problem
    assert "PostgreSQL at 127.0.0.1:1" in problem and dbsetup.START_POSTGRES in problem
    assert "Redis at redis://127.0.0.1:1/0" in problem and dbsetup.START_REDIS in problem


def test_it_warns_when_autovacuum_is_off_and_only_then():
    db = settings.DATABASES["default"]
    with psycopg.connect(**dbsetup._maintenance_conninfo(db)) as conn:
        autovacuum = conn.execute("SHOW autovacuum").fetchone()[0]
    warnings = dbsetup.postgres_warnings(db)
    assert (autovacuum == "off") == any("autovacuum off" in warning for warning in warnings)
    assert dbsetup.postgres_warnings({**db, "HOST": "127.0.0.1", "PORT": "1"}) == []
