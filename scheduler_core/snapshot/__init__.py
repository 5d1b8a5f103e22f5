"""From database rows to the engine's Snapshot: the build, its queue tree and topologies, the
JSON <-> engine conversions, the reuse cache. Imports models, engine and reads; never services.
"""
