"""A web process takes its database connections from a pool unless it was configured otherwise.

Without a pool Django opens a connection for every request and closes it at the end
(``CONN_MAX_AGE`` 0: under ASGI each request runs in a thread of its own, and kept connections
piled up to PostgreSQL's limit). Under bench/load.py that connecting was most of what a
submission waited for: a new PostgreSQL backend per request, its start-up and the time-zone
statement, while the web process held one of its few write slots (gangsched/asgi.py). The
submissions queued behind each other for seconds with the web processes at a quarter of a core
each (docs/operations.md, *Serving load*). A psycopg pool keeps the connections open and bounds them
per process; a request that finds every connection taken waits for one (up to ``timeout``).

Only the web process does this, at its ASGI startup (gangsched/asgi.py), so the Celery worker,
the management commands and the tests keep the settings' connection per use. An explicit
``DATABASE_POOL_MAX_SIZE`` (a pool of that size everywhere) or ``DATABASE_CONN_MAX_AGE`` (kept
connections, which a pool cannot be combined with) is left as it is.
"""

from __future__ import annotations

#: Connections a web process's pool holds at most: the request threads that may run Django at
#: once (gangsched/asgi.py: 2 reads, 2 writes, 2 recomputations) and room for the token
#: renewals and websocket consumers that query beside them.
WEB_POOL_MAX_SIZE = 10
#: Seconds a request waits for a free connection before it fails.
WEB_POOL_TIMEOUT_S = 30


def pool_web_connections() -> bool:
    """Give this process's default database a pool if nothing else was configured; True if it
    did. Connections opened before are closed, so every later one comes from the pool."""
    from django.db import connections

    connection = connections["default"]
    settings_dict = connection.settings_dict
    options = settings_dict.setdefault("OPTIONS", {})
    if options.get("pool") or settings_dict.get("CONN_MAX_AGE"):
        return False
    options["pool"] = {"min_size": 1, "max_size": WEB_POOL_MAX_SIZE, "timeout": WEB_POOL_TIMEOUT_S}
    connection.close()
    return True
