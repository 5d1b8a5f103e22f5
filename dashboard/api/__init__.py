"""The REST API under ``/api/v1/``: one APIView per operation with nested Input/Output
serializers (HackSoft style); writes go through ``scheduler_core.services``, reads through
``selectors``; one exception handler (``exceptions.py``) turns every refusal into
``{"errors": [{"field": ..., "reason": ...}]}``."""
