"""Per-node usage kept by the database: the NodeUsage table, three
statement-level triggers on the member table that append what each statement changed, and the
rows for the pods already bound; and UsageMinute, the same changes summed per minute over the
cluster, from which the overview rebuilds its last hour.

Why a trigger: a pod starts or stops holding its node in some twenty places (the cycle's binds
and evictions, the kubelet, the Kubernetes mirror and backend, failures, kills, retries, gang and
pod deletion, node removal, the admin...); a trigger sees every one of them, in the transaction of
the change, including ``QuerySet.update()``, raw SQL and cascades. Statement-level with
transition tables: one INSERT per statement, whatever the number of pods, and only the pods whose
hold changed (node, active phase or requests) are expanded. A pod holds its node while it is
bound (``node``) and Pending or Running, as ``ACTIVE_MEMBER_PHASES`` says; ``pods`` counts the
pods (a ``pods`` key in requests is ignored, as the simulated cluster ignores it).
"""

from django.db import migrations, models

MEMBER = "scheduler_core_member"
USAGE = "scheduler_core_nodeusage"
MINUTES = "scheduler_core_usageminute"
HOLDS = "{t}.node IS NOT NULL AND {t}.phase IN ('Pending', 'Running')"

#: Appends the summed change per (node, resource) of ``items`` (node, requests, sign), and per
#: resource to the current minute's cluster-wide change (the overview's last hour).
APPEND = f"""
, changes AS (
    SELECT i.node, r.key AS resource, i.sign * (r.value)::numeric AS amount
      FROM items i
     CROSS JOIN LATERAL jsonb_each(
           CASE WHEN jsonb_typeof(i.requests) = 'object' THEN i.requests ELSE '{{}}'::jsonb END) r
     WHERE r.key <> 'pods' AND jsonb_typeof(r.value) = 'number'
    UNION ALL
    SELECT i.node, 'pods', i.sign FROM items i
), per_node AS (
    INSERT INTO {USAGE} (node, resource, amount)
    SELECT node, resource, SUM(amount) FROM changes GROUP BY node, resource HAVING SUM(amount) <> 0
)
INSERT INTO {MINUTES} (minute, resource, amount)
SELECT date_trunc('minute', statement_timestamp()), resource, SUM(amount) FROM changes
 GROUP BY resource HAVING SUM(amount) <> 0
"""

ITEMS = {
    "insert": f"SELECT n.node, n.requests, 1 AS sign FROM new_rows n WHERE {HOLDS.format(t='n')}",
    "delete": f"SELECT o.node, o.requests, -1 AS sign FROM old_rows o WHERE {HOLDS.format(t='o')}",
    # Only the pods whose hold changed: a Pending pod that starts Running, a renamed annotation
    # or a touched ``updated`` column expand nothing.
    "update": f"""
        WITH moved AS (
            SELECT o.node AS old_node, o.requests AS old_requests, {HOLDS.format(t="o")} AS old_holds,
                   n.node AS new_node, n.requests AS new_requests, {HOLDS.format(t="n")} AS new_holds
              FROM old_rows o JOIN new_rows n ON n.id = o.id
        )
        SELECT old_node AS node, old_requests AS requests, -1 AS sign FROM moved
         WHERE old_holds AND (NOT new_holds OR old_node <> new_node OR old_requests <> new_requests)
        UNION ALL
        SELECT new_node, new_requests, 1 FROM moved
         WHERE new_holds AND (NOT old_holds OR old_node <> new_node OR old_requests <> new_requests)
    """,
}
TRANSITIONS = {
    "insert": "NEW TABLE AS new_rows",
    "delete": "OLD TABLE AS old_rows",
    "update": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
}


def _trigger(op: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION gangsched_node_usage_{op}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH items AS ({ITEMS[op]}) {APPEND};
    RETURN NULL;
END $$;
CREATE TRIGGER gangsched_node_usage_{op} AFTER {op.upper()} ON {MEMBER}
    REFERENCING {TRANSITIONS[op]} FOR EACH STATEMENT EXECUTE FUNCTION gangsched_node_usage_{op}();
"""


def _untrigger(op: str) -> str:
    return f"""
DROP TRIGGER IF EXISTS gangsched_node_usage_{op} ON {MEMBER};
DROP FUNCTION IF EXISTS gangsched_node_usage_{op}();
"""


#: The pods already bound, summed once (later changes come from the triggers).
BACKFILL = f"""
INSERT INTO {USAGE} (node, resource, amount)
SELECT node, resource, SUM(amount) FROM (
    SELECT m.node, r.key AS resource, (r.value)::numeric AS amount
      FROM {MEMBER} m
     CROSS JOIN LATERAL jsonb_each(
           CASE WHEN jsonb_typeof(m.requests) = 'object' THEN m.requests ELSE '{{}}'::jsonb END) r
     WHERE {HOLDS.format(t="m")} AND r.key <> 'pods' AND jsonb_typeof(r.value) = 'number'
    UNION ALL
    SELECT m.node, 'pods', 1 FROM {MEMBER} m WHERE {HOLDS.format(t="m")}
) d
GROUP BY node, resource
HAVING SUM(amount) <> 0
"""


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_core", "0016_topology"),
    ]

    operations = [
        migrations.CreateModel(
            name="NodeUsage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("node", models.CharField(max_length=253)),
                ("resource", models.CharField(max_length=253)),
                ("amount", models.BigIntegerField()),
            ],
            options={
                "indexes": [models.Index(fields=["node", "resource"], name="nodeusage_node_idx")],
            },
        ),
        migrations.CreateModel(
            name="UsageMinute",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("minute", models.DateTimeField(help_text="The minute of the change (seconds zeroed).")),
                ("resource", models.CharField(max_length=253)),
                ("amount", models.BigIntegerField()),
            ],
            options={
                "indexes": [models.Index(fields=["minute"], name="usageminute_minute_idx")],
            },
        ),
        migrations.RunSQL(
            sql="".join(_trigger(op) for op in ITEMS) + BACKFILL,
            reverse_sql="".join(_untrigger(op) for op in ITEMS),
        ),
    ]
