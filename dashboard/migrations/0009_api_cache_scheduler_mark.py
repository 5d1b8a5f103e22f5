"""Say who made a change in its read-cache notification: the payload is ``<origin> <who>``, the
origin ``s`` for the scheduler, ``w<process id>`` for a web process, ``-`` for anyone else (the
CLI, psql), then the submitter as before (``*`` for what every scope shows). The origin has no
space, so the submitter after the first one is read back whatever characters it has.

The API's read cache (dashboard/api/read_cache.py) may answer a poller from an entry that only
the scheduler's progress has made stale (binds, starts, finishes, timeouts) while it recomputes
it, for at most ``GANGSCHED_API_CACHE_MAX_STALE_SECONDS``; any other change (a submission, a
kill, an admin edit) still invalidates the submitter's entries at once. The scheduler's database
sessions say who they are with their application name (``gangsched-scheduler``, set by the Celery
worker: gangsched/celery.py), which the functions below read once per statement. So do the web
processes' (``gangsched-web-<process id>``, gangsched/asgi.py): a web process has already
applied its own API writes when their notification arrives, so it takes it as soft, and its
submitter's next read is not computed twice.

The functions also run without the JIT compiler, as scheduler_core 0020 explains for the other
transition-table triggers: with no statistics on a transition table, a 10,000-member UPDATE's
notification query is planned far above ``jit_above_cost`` and compiled on every run.
"""

import importlib

from django.db import migrations

CHANNEL = "gangsched_api"
SCHEDULER = "gangsched-scheduler"
WEB = "gangsched-web-"  # then the web process's id
DECLARE = "DECLARE origin text := CASE " + (
    f"WHEN current_setting('application_name') = '{SCHEDULER}' THEN 's ' "
    f"WHEN current_setting('application_name') LIKE '{WEB}%' "
    f"THEN 'w' || substr(current_setting('application_name'), {len(WEB) + 1}) || ' ' "
    "ELSE '- ' END;"
)

FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION gangsched_api_gangs_changed() RETURNS trigger LANGUAGE plpgsql
SET jit = off AS $$
{DECLARE}
BEGIN
    PERFORM pg_notify('{CHANNEL}', origin || s.submitter) FROM (SELECT DISTINCT submitter FROM changed) AS s;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION gangsched_api_gang_rows_changed() RETURNS trigger LANGUAGE plpgsql
SET jit = off AS $$
{DECLARE}
BEGIN
    PERFORM pg_notify('{CHANNEL}', origin || s.submitter) FROM (
        SELECT DISTINCT g.submitter FROM scheduler_core_gang g
         WHERE g.id IN (SELECT DISTINCT gang_id FROM changed WHERE gang_id IS NOT NULL)
    ) AS s;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION gangsched_api_all_changed() RETURNS trigger LANGUAGE plpgsql AS $$
{DECLARE}
BEGIN
    PERFORM pg_notify('{CHANNEL}', origin || '*');
    RETURN NULL;
END $$;
"""

PREVIOUS = importlib.import_module("dashboard.migrations.0008_api_read_cache_triggers").FUNCTIONS


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0008_api_read_cache_triggers")]

    operations = [migrations.RunSQL(FUNCTIONS, PREVIOUS)]
