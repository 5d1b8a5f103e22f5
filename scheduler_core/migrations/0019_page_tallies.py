"""What the pages read instead of every pod and event: QueueUsage, each
queue's bound and waiting requests, kept by the member table's triggers of 0017 (their functions
now also append the queue rows, in the same statement: no second trigger on the member table)
and by a row trigger on a gang's queue change; GangEventMinute, the gang events per minute and
submitter, kept by statement-level triggers on the event table (and a row trigger on an edit of
what it counts). Both filled for what exists.

A member is charged to a queue while it is Pending or Running (``ACTIVE_MEMBER_PHASES``), as
bound when it has a node; to its gang's queue, or its own when alone (``queue_figures``).
Amounts are truncated to integers per pod, as ``snapshot.json_fields.ints`` does.
"""

import importlib

from django.db import migrations, models

MEMBER = "scheduler_core_member"
GANG = "scheduler_core_gang"
EVENT = "scheduler_core_gangevent"
USAGE = "scheduler_core_nodeusage"
MINUTES = "scheduler_core_usageminute"
QUEUES = "scheduler_core_queueusage"
EVENT_MINUTES = "scheduler_core_gangeventminute"
ACTIVE = "{t}.phase IN ('Pending', 'Running')"
REQUESTS = "CASE WHEN jsonb_typeof({t}.requests) = 'object' THEN {t}.requests ELSE '{{}}'::jsonb END"
#: How long the event minutes are kept (the overview charts the last hour), as UsageMinute.
KEPT = "2 hours"

#: From ``items`` (node, requests, sign, namespace, queue, gang_id: each active pod whose charge
#: changed, +1 as it is now, -1 as it was), the node rows and the cluster's minute as 0017 wrote
#: them, and the queue rows.
APPEND = f"""
, charged AS (
    SELECT i.node, i.requests, i.sign, i.namespace, COALESCE(g.queue, i.queue) AS queue
      FROM items i LEFT JOIN {GANG} g ON g.id = i.gang_id
), amounts AS (
    SELECT c.node, c.namespace, c.queue, r.key AS resource, c.sign * (r.value)::numeric AS amount
      FROM charged c CROSS JOIN LATERAL jsonb_each({REQUESTS.format(t="c")}) r
     WHERE jsonb_typeof(r.value) = 'number'
), changes AS (
    SELECT node, resource, amount FROM amounts WHERE node IS NOT NULL AND resource <> 'pods'
    UNION ALL
    SELECT node, 'pods', sign FROM charged WHERE node IS NOT NULL
), per_node AS (
    INSERT INTO {USAGE} (node, resource, amount)
    SELECT node, resource, SUM(amount) FROM changes GROUP BY node, resource HAVING SUM(amount) <> 0
), per_queue AS (
    INSERT INTO {QUEUES} (namespace, queue, bound, resource, amount)
    SELECT namespace, queue, bound, resource, SUM(amount) FROM (
        SELECT namespace, queue, node IS NOT NULL AS bound, resource, trunc(amount) AS amount FROM amounts
        UNION ALL
        SELECT namespace, queue, node IS NOT NULL, '', sign FROM charged
    ) q
    GROUP BY namespace, queue, bound, resource HAVING SUM(amount) <> 0
)
INSERT INTO {MINUTES} (minute, resource, amount)
SELECT date_trunc('minute', statement_timestamp()), resource, SUM(amount) FROM changes
 GROUP BY resource HAVING SUM(amount) <> 0
"""

_COLUMNS = "{t}.node, {t}.requests, {sign} AS sign, {t}.namespace, {t}.queue, {t}.gang_id"
ITEMS = {
    "insert": f"SELECT {_COLUMNS.format(t='n', sign=1)} FROM new_rows n WHERE {ACTIVE.format(t='n')}",
    "delete": f"SELECT {_COLUMNS.format(t='o', sign=-1)} FROM old_rows o WHERE {ACTIVE.format(t='o')}",
    # Only the pods whose charge changed: a Pending pod that starts Running on its node, a renamed
    # annotation or a touched ``updated`` column expand nothing.
    "update": f"""
        WITH moved AS (
            SELECT o.node AS old_node, o.requests AS old_requests, o.namespace AS old_namespace,
                   o.queue AS old_queue, o.gang_id AS old_gang, {ACTIVE.format(t="o")} AS old_active,
                   n.node AS new_node, n.requests AS new_requests, n.namespace AS new_namespace,
                   n.queue AS new_queue, n.gang_id AS new_gang, {ACTIVE.format(t="n")} AS new_active,
                   (o.node IS DISTINCT FROM n.node OR o.requests IS DISTINCT FROM n.requests
                    OR o.namespace <> n.namespace OR o.queue <> n.queue
                    OR o.gang_id IS DISTINCT FROM n.gang_id) AS changed
              FROM old_rows o JOIN new_rows n ON n.id = o.id
        )
        SELECT old_node AS node, old_requests AS requests, -1 AS sign, old_namespace AS namespace,
               old_queue AS queue, old_gang AS gang_id
          FROM moved WHERE old_active AND (NOT new_active OR changed)
        UNION ALL
        SELECT new_node, new_requests, 1, new_namespace, new_queue, new_gang
          FROM moved WHERE new_active AND (NOT old_active OR changed)
    """,
}


def _function(op: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION gangsched_node_usage_{op}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH items AS ({ITEMS[op]}) {APPEND};
    RETURN NULL;
END $$;
"""


#: A gang's queue changed: its active members move from the old queue's rows to the new one's.
GANG_QUEUE = f"""
CREATE OR REPLACE FUNCTION gangsched_queue_usage_gang() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {QUEUES} (namespace, queue, bound, resource, amount)
    SELECT namespace, queue, bound, resource, SUM(amount) FROM (
        SELECT m.namespace, s.queue, m.node IS NOT NULL AS bound, r.key AS resource,
               s.sign * trunc((r.value)::numeric) AS amount
          FROM {MEMBER} m CROSS JOIN (VALUES (OLD.queue, -1), (NEW.queue, 1)) s(queue, sign)
         CROSS JOIN LATERAL jsonb_each({REQUESTS.format(t="m")}) r
         WHERE m.gang_id = NEW.id AND {ACTIVE.format(t="m")} AND jsonb_typeof(r.value) = 'number'
        UNION ALL
        SELECT m.namespace, s.queue, m.node IS NOT NULL, '', s.sign
          FROM {MEMBER} m CROSS JOIN (VALUES (OLD.queue, -1), (NEW.queue, 1)) s(queue, sign)
         WHERE m.gang_id = NEW.id AND {ACTIVE.format(t="m")}
    ) d
    GROUP BY namespace, queue, bound, resource HAVING SUM(amount) <> 0;
    RETURN NULL;
END $$;
CREATE TRIGGER gangsched_queue_usage_gang AFTER UPDATE OF queue ON {GANG}
    FOR EACH ROW WHEN (OLD.queue IS DISTINCT FROM NEW.queue) EXECUTE FUNCTION gangsched_queue_usage_gang();
"""


def _event_trigger(op: str) -> str:
    rows, sign, table = ("new_rows", 1, "NEW") if op == "insert" else ("old_rows", -1, "OLD")
    return f"""
CREATE OR REPLACE FUNCTION gangsched_event_minutes_{op}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {EVENT_MINUTES} (minute, submitter, kind, n)
    SELECT date_trunc('minute', e.created), COALESCE(g.submitter, ''), e.kind, {sign} * COUNT(*)
      FROM {rows} e LEFT JOIN {GANG} g ON g.id = e.gang_id
     WHERE e.created >= statement_timestamp() - interval '{KEPT}'
     GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;
CREATE TRIGGER gangsched_event_minutes_{op} AFTER {op.upper()} ON {EVENT}
    REFERENCING {table} TABLE AS {rows} FOR EACH STATEMENT EXECUTE FUNCTION gangsched_event_minutes_{op}();
"""


#: Events are appended, not edited, but for bookkeeping columns (``published_at``, which does not
#: fire this): an edit of what the minutes count moves the event between them, row by row.
EVENT_EDIT = f"""
CREATE OR REPLACE FUNCTION gangsched_event_minutes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {EVENT_MINUTES} (minute, submitter, kind, n)
    SELECT date_trunc('minute', e.created), COALESCE(g.submitter, ''), e.kind, e.sign
      FROM (VALUES (OLD.created, OLD.kind, OLD.gang_id, -1), (NEW.created, NEW.kind, NEW.gang_id, 1))
           e(created, kind, gang_id, sign)
      LEFT JOIN {GANG} g ON g.id = e.gang_id
     WHERE e.created >= statement_timestamp() - interval '{KEPT}';
    RETURN NULL;
END $$;
CREATE TRIGGER gangsched_event_minutes_update AFTER UPDATE OF created, kind, gang_id ON {EVENT}
    FOR EACH ROW WHEN (OLD.created IS DISTINCT FROM NEW.created OR OLD.kind IS DISTINCT FROM NEW.kind
                       OR OLD.gang_id IS DISTINCT FROM NEW.gang_id)
    EXECUTE FUNCTION gangsched_event_minutes_update();
"""


#: What exists already, summed once (later changes come from the triggers).
BACKFILL = f"""
INSERT INTO {QUEUES} (namespace, queue, bound, resource, amount)
SELECT namespace, queue, bound, resource, SUM(amount) FROM (
    SELECT m.namespace, COALESCE(g.queue, m.queue) AS queue, m.node IS NOT NULL AS bound,
           r.key AS resource, trunc((r.value)::numeric) AS amount
      FROM {MEMBER} m LEFT JOIN {GANG} g ON g.id = m.gang_id
     CROSS JOIN LATERAL jsonb_each({REQUESTS.format(t="m")}) r
     WHERE {ACTIVE.format(t="m")} AND jsonb_typeof(r.value) = 'number'
    UNION ALL
    SELECT m.namespace, COALESCE(g.queue, m.queue), m.node IS NOT NULL, '', 1
      FROM {MEMBER} m LEFT JOIN {GANG} g ON g.id = m.gang_id
     WHERE {ACTIVE.format(t="m")}
) d
GROUP BY namespace, queue, bound, resource HAVING SUM(amount) <> 0;
INSERT INTO {EVENT_MINUTES} (minute, submitter, kind, n)
SELECT date_trunc('minute', e.created), COALESCE(g.submitter, ''), e.kind, COUNT(*)
  FROM {EVENT} e LEFT JOIN {GANG} g ON g.id = e.gang_id
 WHERE e.created >= now() - interval '{KEPT}'
 GROUP BY 1, 2, 3;
"""


def _before() -> str:
    """0017's member-trigger functions, put back when this migration is reversed."""
    previous = importlib.import_module("scheduler_core.migrations.0017_node_usage")
    return "".join(
        f"""
CREATE OR REPLACE FUNCTION gangsched_node_usage_{op}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH items AS ({previous.ITEMS[op]}) {previous.APPEND};
    RETURN NULL;
END $$;
"""
        for op in previous.ITEMS
    )


UNDO = f"""
DROP TRIGGER IF EXISTS gangsched_queue_usage_gang ON {GANG};
DROP FUNCTION IF EXISTS gangsched_queue_usage_gang();
DROP TRIGGER IF EXISTS gangsched_event_minutes_insert ON {EVENT};
DROP FUNCTION IF EXISTS gangsched_event_minutes_insert();
DROP TRIGGER IF EXISTS gangsched_event_minutes_delete ON {EVENT};
DROP FUNCTION IF EXISTS gangsched_event_minutes_delete();
DROP TRIGGER IF EXISTS gangsched_event_minutes_update ON {EVENT};
DROP FUNCTION IF EXISTS gangsched_event_minutes_update();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_core", "0018_bindintent"),
    ]

    operations = [
        migrations.CreateModel(
            name="QueueUsage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("namespace", models.CharField(max_length=253)),
                ("queue", models.CharField(max_length=253)),
                ("bound", models.BooleanField()),
                ("resource", models.CharField(blank=True, max_length=253)),
                ("amount", models.BigIntegerField()),
            ],
            options={
                "indexes": [models.Index(fields=["namespace", "queue"], name="queueusage_queue_idx")],
            },
        ),
        migrations.CreateModel(
            name="GangEventMinute",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("minute", models.DateTimeField(help_text="The minute of the events (seconds zeroed).")),
                ("submitter", models.CharField(blank=True, max_length=150)),
                ("kind", models.CharField(max_length=16)),
                ("n", models.BigIntegerField()),
            ],
            options={
                "indexes": [models.Index(fields=["minute"], name="gangeventminute_minute_idx")],
            },
        ),
        migrations.RunSQL(
            sql="".join(_function(op) for op in ITEMS)
            + GANG_QUEUE
            + "".join(_event_trigger(op) for op in ("insert", "delete"))
            + EVENT_EDIT
            + BACKFILL,
            reverse_sql=_before() + UNDO,
        ),
    ]
