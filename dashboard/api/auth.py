"""``POST /api/v1/auth/token/``: a DRF token for a username and password (the one endpoint
anonymous users may call). Send it as ``Authorization: Token <key>``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny
from rest_framework.throttling import AnonRateThrottle

from .parsers import JSONParser


class TokenThrottle(AnonRateThrottle):
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
        responses={200: inline_serializer("TokenOutput", {"token": serializers.CharField()})},
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
