"""The one exception handler of the API: every refusal has the same body,

    {"errors": [{"field": "pods[1].requests.cpu", "reason": "invalid quantity ..."}]}

``field`` is the JSON path of the offending input, or null when the whole request is meant.
Services raise ValueError (bad input: 400), GangActionError (the gang's phase forbids the action:
409), QueueInUse or TopologyInUse (a queue or topology still needed is not deleted: 409) or
DeclarationError (a manifest, with its own ``.field``: 400); a unique-constraint race between two
submissions of one name is a 409.
Bad input never becomes a 500.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import IntegrityError
from django.http import Http404, JsonResponse
from django.views import defaults
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from scheduler_core.services.operator import GangActionError
from scheduler_core.services.queues import QueueInUse
from scheduler_core.services.topology import TopologyInUse


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"
    field = "body"


ERROR_SCHEMA = inline_serializer(
    "Errors",
    {
        "errors": serializers.ListField(
            child=inline_serializer(
                "Error",
                {"field": serializers.CharField(allow_null=True), "reason": serializers.CharField()},
            )
        )
    },
)
#: The documented body of every refusal (for ``@extend_schema(responses=...)``).
ERRORS = OpenApiResponse(
    ERROR_SCHEMA,
    description='Every refusal: {"errors": [{"field": "pods[0].requests.cpu", "reason": "..."}]}',
)


def error_body(errors: list[tuple[str | None, str]]) -> dict[str, Any]:
    return {"errors": [{"field": field, "reason": str(reason)} for field, reason in errors]}


def flatten(detail: Any, prefix: str | None = None) -> list[tuple[str | None, str]]:
    """DRF's nested error structure as (JSON path, reason) pairs: ``{"pods": [{}, {"name": [..]}]}``
    becomes ``("pods[1].name", ...)``; ``non_field_errors`` belong to the object that holds them."""
    if isinstance(detail, dict):
        pairs = []
        for key, value in detail.items():
            if key in ("non_field_errors", "detail"):
                path = prefix
            elif isinstance(key, int):
                path = f"{prefix or ''}[{key}]"
            else:
                path = f"{prefix}.{key}" if prefix else str(key)
            pairs.extend(flatten(value, path))
        return pairs
    if isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            return [(prefix, str(item)) for item in detail]
        pairs = []
        for index, item in enumerate(detail):
            if item:  # DRF leaves {} for the list items that were fine
                pairs.extend(flatten(item, f"{prefix or ''}[{index}]"))
        return pairs
    return [(prefix, str(detail))]


def _field_of(error: BaseException) -> str | None:
    field = getattr(error, "field", None)
    return str(field) if field else None


def api_exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, (GangActionError, QueueInUse, TopologyInUse)):
        return Response(error_body([(None, str(exc))]), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, IntegrityError):
        # Two submissions raced for one name: the loser's pre-checks passed, the constraint did not.
        reason = "conflicts with an object created at the same time; retry to see what exists"
        return Response(error_body([(None, reason)]), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, ValueError):  # services' bad-input errors, DeclarationError included
        reason = getattr(exc, "reason", None) or str(exc)
        return Response(error_body([(_field_of(exc), reason)]), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, RequestDataTooBig):  # over DATA_UPLOAD_MAX_MEMORY_SIZE: Django's HTML 400
        exc = PayloadTooLarge(
            f"the request body is over the limit of {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"
        )
    if isinstance(exc, exceptions.ParseError) and not getattr(exc, "field", None):
        exc.field = "body"  # the body as a whole is not JSON (YAML manifests have their own paths)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = exception_handler(exc, context)
    if response is None:
        return None  # a real bug: let Django report it as a 500
    if isinstance(exc, exceptions.ValidationError):
        errors = flatten(exc.detail) or [(None, "invalid input")]
    else:
        errors = [(_field_of(exc), exc.detail if isinstance(exc, exceptions.APIException) else response.data)]
    response.data = error_body(errors)
    return response


def not_found(request, exception):
    """Django's 404 handler: under ``/api/`` a path no route matches (``/api/v1/simulations/x/``)
    answers in the API's error shape, as a missing object does; elsewhere Django's page."""
    if request.path.startswith("/api/"):
        reason = exceptions.NotFound.default_detail
        return JsonResponse(error_body([(None, reason)]), status=status.HTTP_404_NOT_FOUND)
    return defaults.page_not_found(request, exception)
