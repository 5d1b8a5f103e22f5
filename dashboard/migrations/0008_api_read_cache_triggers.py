"""Notify the API's read cache (dashboard/api/read_cache.py) of every change it may have cached.

PostgreSQL delivers a NOTIFY when, and only if, the transaction that sent it commits, so a web
process listening on ``gangsched_api`` learns of each committed change whoever made it: the API,
a Celery worker's cycle or kubelet tick, the CLI, the admin, a raw ``QuerySet.update()``. The
GangEvent outbox alone would not do: a gang's counts (``running``, ``succeeded``) and its
members change without an event.

The payload says whose data changed: the submitter of each gang touched (gangs, their members
and their events), so a submitter's cached reads stay valid while others' gangs change; ``*``
when something every detail may show changed (nodes' names or labels, topologies, HyperNodes,
gang groups). Triggers are per statement, with transition tables: a cycle that binds 10,000
pods in one UPDATE sends one notification per submitter, not 10,000. ``published_at`` (the
publisher's stamp on events) is not shown by the API: event UPDATEs notify nothing.
"""

from django.db import migrations

CHANNEL = "gangsched_api"

FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION gangsched_api_gangs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', s.submitter) FROM (SELECT DISTINCT submitter FROM changed) AS s;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION gangsched_api_gang_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', s.submitter) FROM (
        SELECT DISTINCT g.submitter FROM scheduler_core_gang g
         WHERE g.id IN (SELECT DISTINCT gang_id FROM changed WHERE gang_id IS NOT NULL)
    ) AS s;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION gangsched_api_all_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{CHANNEL}', '*');
    RETURN NULL;
END $$;
"""


def _row_triggers(table: str, function: str, events: tuple[str, ...]) -> tuple[str, str]:
    create, drop = [], []
    for event in events:
        name = f"gangsched_api_{table}_{event.lower()}"
        rows = "OLD TABLE AS changed" if event == "DELETE" else "NEW TABLE AS changed"
        create.append(
            f"CREATE TRIGGER {name} AFTER {event} ON scheduler_core_{table} "
            f"REFERENCING {rows} FOR EACH STATEMENT EXECUTE FUNCTION {function}();"
        )
        drop.append(f"DROP TRIGGER IF EXISTS {name} ON scheduler_core_{table};")
    return "\n".join(create), "\n".join(drop)


def _all_trigger(table: str, events: str) -> tuple[str, str]:
    name = f"gangsched_api_{table}_all"
    return (
        f"CREATE TRIGGER {name} AFTER {events} ON scheduler_core_{table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION gangsched_api_all_changed();",
        f"DROP TRIGGER IF EXISTS {name} ON scheduler_core_{table};",
    )


TRIGGERS = [
    _row_triggers("gang", "gangsched_api_gangs_changed", ("INSERT", "UPDATE", "DELETE")),
    _row_triggers("member", "gangsched_api_gang_rows_changed", ("INSERT", "UPDATE", "DELETE")),
    _row_triggers("gangevent", "gangsched_api_gang_rows_changed", ("INSERT", "DELETE")),
    # A detail shows each bound member's domains (node labels, topologies, HyperNodes) and its
    # group's other gangs; a node's usage columns are not shown: only its name and labels count.
    _all_trigger("node", "INSERT OR DELETE OR UPDATE OF name, labels"),
    _all_trigger("topology", "INSERT OR UPDATE OR DELETE"),
    _all_trigger("hypernode", "INSERT OR UPDATE OR DELETE"),
    _all_trigger("ganggroup", "INSERT OR UPDATE OR DELETE"),
]

DROP_FUNCTIONS = """
DROP FUNCTION IF EXISTS gangsched_api_gangs_changed();
DROP FUNCTION IF EXISTS gangsched_api_gang_rows_changed();
DROP FUNCTION IF EXISTS gangsched_api_all_changed();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0007_operators_manage_topology"),
        ("scheduler_core", "0016_topology"),
    ]

    operations = [
        migrations.RunSQL(
            FUNCTIONS + "\n".join(create for create, _ in TRIGGERS),
            "\n".join(drop for _, drop in TRIGGERS) + DROP_FUNCTIONS,
        )
    ]
