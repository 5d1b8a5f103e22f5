"""``POST /api/v1/auth/token/``: a DRF token for a username and password (the one endpoint
anonymous users may call). Send it as ``Authorization: Token <key>``."""

from __future__ import annotations

from collections.abc import Mapping

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.throttling import AnonRateThrottle

from dashboard.login import locked_out_message, login_failed, login_locked, login_succeeded

from .exceptions import ERRORS
from .parsers import JSONParser
from .throttles import ProcessCacheThrottle


class TokenThrottle(ProcessCacheThrottle, AnonRateThrottle):
    """Password guessing is slowed per client address."""

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
        # The sign-in page's failure limit (dashboard/login.py) holds here too: one count per
        # username and address, whichever door the guesses come through.
        username = request.data.get("username") if isinstance(request.data, Mapping) else None
        username = username if isinstance(username, str) else ""
        if login_locked(request, username):
            raise Throttled(detail=locked_out_message())
        try:
            response = super().post(request, *args, **kwargs)
        except ValidationError:
            login_failed(request, username)
            raise
        login_succeeded(request, username)
        return response
