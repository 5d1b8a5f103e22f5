"""What submitters declare, in normal form: queue and topology specs, the error that names a bad
field, and YuniKorn's placeholder marks. Declarations parse into these and services apply them,
so both import this package; it imports nothing else of scheduler_core.
"""
