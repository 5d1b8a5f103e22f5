"""Writes: every change to gangs, pods and nodes goes through a function here (``<noun>_<verb>``,
keyword-only), so grepping a noun finds every operation on it. Reads live in the callers or in
``scheduler_core/reads/``; the engine never imports this package."""
