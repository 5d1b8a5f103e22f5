"""A per-user limit on submissions (gang jobs and manifests), counted in the shared cache."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import UserRateThrottle

DEFAULT_SUBMIT_RATE = "60/min"


class SubmitThrottle(UserRateThrottle):
    """``GANGSCHED_SUBMIT_RATE`` submissions per user, read at request time (so a test can
    override it); reads on the same view are never throttled."""

    scope = "submit"

    def __init__(self):  # the parent reads the rate from DRF's settings here; ours is read per request
        pass

    def allow_request(self, request, view) -> bool:
        if request.method not in ("POST", "PUT", "PATCH"):
            return True
        self.rate = getattr(settings, "GANGSCHED_SUBMIT_RATE", DEFAULT_SUBMIT_RATE)
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)
