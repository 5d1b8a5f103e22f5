"""The trigger functions over transition tables (0017's per-node usage, redefined by 0019 to keep
the queue usage too, and 0019's gang-event minutes) run without PostgreSQL's JIT compiler.

Why: PL/pgSQL plans a trigger's statement once per session and keeps the plan. The planner has
no statistics on transition tables, so the update trigger's join of ``old_rows`` and
``new_rows`` is estimated at 500,000 rows for a 10,000-row statement, far above
``jit_above_cost``, and the kept plan is JIT-compiled on every execution: 330-390 ms of LLVM
compilation per member UPDATE in a worker's session, whether it changed 10,000 pods or 500,
against ~0.1 s of actual work for 10,000 (measured with auto_explain, bench/README.md, "The
member-table triggers"). Turning JIT off for these functions only (a function's ``SET`` clause
applies while it runs and is restored after) leaves every other query as it was.

A later migration that replaces one of these functions with ``CREATE OR REPLACE FUNCTION``
resets its attributes: it must say ``SET jit = off`` again (``NO_JIT`` below).
"""

from django.db import migrations

FUNCTIONS = (
    "gangsched_node_usage_insert",
    "gangsched_node_usage_update",
    "gangsched_node_usage_delete",
    "gangsched_queue_usage_gang",
    "gangsched_event_minutes_insert",
    "gangsched_event_minutes_delete",
    "gangsched_event_minutes_update",
)

#: The clause a ``CREATE OR REPLACE FUNCTION`` of a member-table trigger function should carry.
NO_JIT = "SET jit = off"


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_core", "0019_page_tallies"),  # after 0019's CREATE OR REPLACE, which resets it
    ]

    operations = [
        migrations.RunSQL(
            sql="".join(f"ALTER FUNCTION {name}() {NO_JIT};\n" for name in FUNCTIONS),
            reverse_sql="".join(f"ALTER FUNCTION {name}() RESET jit;\n" for name in FUNCTIONS),
        ),
    ]
