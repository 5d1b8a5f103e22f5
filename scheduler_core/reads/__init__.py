"""Reads that the commands, the API, the pages and the snapshot share, and the upkeep of the sums
they read (node usage, tallies). Imports models, engine and db; never services, snapshot or cluster.
"""
