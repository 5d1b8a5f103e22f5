"""The commands of ``manage.py``: parse arguments, call the declarations, services and reads,
print. The top layer: nothing of scheduler_core imports this package."""
