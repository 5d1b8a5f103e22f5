"""PostgreSQL plumbing under the models: bulk inserts, packed arrays, creating the database, naming
sessions. Imports Django's database layer and the drivers; nothing else of scheduler_core.
"""
