"""Writes: every change to gangs, pods and nodes goes through a function here (``<noun>_<verb>``,
keyword-only), so grepping a noun finds every operation on it. Reads live in the callers or in
``scheduler_core/reads/``; the engine never imports this package.

Imports the engine, models, db, reads, snapshot, specs and cluster; never the declarations
(they call in here), and ``tasks`` only for ``cycle_trigger``, as its imports say."""
