"""``POST /api/v1/auth/token/``: a DRF token for a username and password (the one endpoint
anonymous users may call). Send it as ``Authorization: Token <key>``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.throttling import AnonRateThrottle

from dashboard.signin import refusal_of

from .exceptions import ERRORS
from .parsers import JSONParser
from .throttles import ProcessCacheThrottle


class TokenThrottle(ProcessCacheThrottle, AnonRateThrottle):
    """Token requests, right password or not, per client address (dashboard/client_address.py):
    each costs a password hash."""

    rate = "30/min"


class TokenObtainApi(ObtainAuthToken):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = [TokenThrottle]
    parser_classes = [JSONParser, *ObtainAuthToken.parser_classes]

    @extend_schema(
        operation_id="auth_token",
        summary="Obtain an API token",
        request=inline_serializer(
            "TokenInput", {"username": serializers.CharField(), "password": serializers.CharField()}
        ),
        responses={
            200: inline_serializer("TokenOutput", {"token": serializers.CharField()}),
            400: ERRORS,
            429: ERRORS,
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        # The sign-in limits (dashboard/signin.py) are enforced in authenticate(), as on the
        # login pages; a refused attempt is a 429 with the reason and Retry-After, not a 400.
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            refused = refusal_of(request)
            if refused is None:
                raise
        throttled = Throttled(detail=refused.message)
        throttled.wait = refused.retry_after  # set after: DRF would add "Expected available in..."
        raise throttled
