"""Queue endpoints: the tree with its live figures, as far as the user may read it
(``permissions.queue_figures_visible``: a submitter, the queues they may submit to and their
ancestors; any other queue is a 404 as if it did not exist); create, change, delete, close and
open for operators (``scheduler_core.change_queue``).

Every write goes through ``services/queues.py``, so the API refuses what a manifest would, with
the same reasons: an error's ``field`` is the JSON key (``guarantee.cpu``, ``parent``).
Amounts are read as Kubernetes quantities (``"500m"``, ``"64Gi"``, ``8``) and answered as the
engine's canonical integers, as the node endpoints answer them.
"""

from __future__ import annotations

import django_filters
from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from scheduler_core.declarations.cluster import QUEUE_PERMISSION
from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.engine.quantity import QuantityError, canonical_amount
from scheduler_core.models import Queue
from scheduler_core.reads.queue_figures import QueueFigures
from scheduler_core.services import queues as service
from scheduler_core.specs.queues import QueueSpec

from .exceptions import ERRORS
from .fields import ResourceMapField, StrictBooleanField, StrictNumberField, SubdomainNameField
from .parsers import JSONParser
from .permissions import queue_figures_visible
from .serializers import StrictSerializer

#: API keys whose service name differs (an error's field is the key the caller sent).
RENAMES = {"lendingLimit": "lending_limit", "defaultRuntimeSeconds": "default_runtime_s"}


class IsQueueOperator(BasePermission):
    """Reads for everyone signed in (each the queues they read); writes with
    ``scheduler_core.change_queue`` (operators)."""

    message = "Only operators may create, change, close or delete queues."

    def has_permission(self, request, view) -> bool:
        return request.method in ("GET", "HEAD", "OPTIONS") or request.user.has_perm(QUEUE_PERMISSION)


class QueueOutput(serializers.Serializer):
    name = serializers.CharField(source="queue.name")
    parent = serializers.CharField(allow_null=True)
    path = serializers.CharField(help_text='The names from the top of the tree down, e.g. "ml/nlp".')
    children = serializers.ListField(child=serializers.CharField())
    guarantee = serializers.DictField(source="queue.guarantee", child=serializers.IntegerField())
    max = serializers.DictField(
        source="queue.max", child=serializers.IntegerField(), help_text="A missing resource: unlimited."
    )
    lendingLimit = serializers.DictField(  # noqa: N815 (the API's camelCase)
        source="queue.lending_limit",
        child=serializers.IntegerField(),
        help_text="A missing resource: lends all.",
    )
    weight = serializers.FloatField(source="queue.weight")
    weights = serializers.DictField(
        source="queue.weights",
        child=serializers.FloatField(),
        read_only=True,
        help_text="Over-quota weight per resource (KAI's overQuotaWeight); a resource not named: weight.",
    )
    unlimitedGuarantee = serializers.ListField(  # noqa: N815
        source="queue.unlimited_guarantee",
        child=serializers.CharField(),
        read_only=True,
        help_text="Resources guaranteed all the queue asks (a KAI Queue's quota -1).",
    )
    reclaimable = serializers.BooleanField(source="queue.reclaimable")
    reclaimDelaySeconds = serializers.FloatField(  # noqa: N815
        source="queue.reclaim_delay_s",
        allow_null=True,
        read_only=True,
        help_text="Seconds its work waits before reclaiming beyond its guarantee (a Volcano queue: 0, "
        "a YuniKorn queue: its preemption.delay); null: the global GANGSCHED_RECLAIM_DELAY_S.",
    )
    defaultRuntimeSeconds = serializers.FloatField(  # noqa: N815
        source="queue.default_runtime_s",
        allow_null=True,
        help_text="Expected runtime of its gangs that have no declared, learned or limit figure; null: "
        "the global GANGSCHED_DEFAULT_RUNTIME_S (see docs/forecasts.md).",
    )
    preemptWithin = serializers.BooleanField(  # noqa: N815
        source="queue.preempt_within",
        read_only=True,
        help_text="Whether its work may evict its own lower-priority work (false: a Kueue ClusterQueue "
        "with withinClusterQueue Never, its default, and a YuniKorn queue).",
    )
    reclaimUpTo = serializers.CharField(  # noqa: N815
        source="queue.reclaim_up_to",
        read_only=True,
        help_text='How far its work reclaims from other queues: "fair-share" (its guarantee at once, then '
        'its fair share after its delay) or "guarantee" (only its guarantee, after its delay: YuniKorn).',
    )
    open = serializers.BooleanField(source="queue.open")
    cohort = serializers.BooleanField(source="queue.cohort")
    sourceFormat = serializers.CharField(source="queue.source_format")  # noqa: N815
    used = serializers.DictField(child=serializers.IntegerField(), help_text="Bound pods' requests, subtree.")
    pending = serializers.DictField(
        child=serializers.IntegerField(), help_text="Requests of the pending pods the scheduler tries."
    )
    pendingPods = serializers.IntegerField(source="pending_pods")  # noqa: N815
    stalled = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Requests of the pending pods of timed-out, failed or killed gangs (until retried).",
    )
    stalledPods = serializers.IntegerField(source="stalled_pods")  # noqa: N815
    borrowed = serializers.DictField(child=serializers.IntegerField(), help_text="Used above the guarantee.")
    fairShare = serializers.DictField(  # noqa: N815
        source="fair_share",
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="As the latest scheduling cycle computed it; null before a cycle has seen the queue.",
    )
    lent = serializers.DictField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Of its unused guarantee, what others borrow now (latest cycle); null before one.",
    )


class QueueInput(StrictSerializer):
    name = SubdomainNameField()
    parent = SubdomainNameField(required=False, allow_null=True)
    guarantee = ResourceMapField(required=False)
    max = ResourceMapField(required=False)
    lendingLimit = ResourceMapField(required=False)  # noqa: N815
    weight = StrictNumberField(required=False)
    reclaimable = StrictBooleanField(required=False)
    open = StrictBooleanField(required=False)
    cohort = StrictBooleanField(required=False)
    defaultRuntimeSeconds = StrictNumberField(required=False, allow_null=True, min_value=0)  # noqa: N815


class QueueChangeInput(QueueInput):
    name = None  # the path names the queue


class QueueFilter(django_filters.FilterSet):
    """Filters of the list (applied to the tree before its figures are read)."""

    parent = django_filters.CharFilter(field_name="parent__name", help_text="Children of this queue.")
    open = django_filters.BooleanFilter()
    cohort = django_filters.BooleanFilter()

    class Meta:
        model = Queue
        fields = ["parent", "open", "cohort"]


def _amounts(data: dict, key: str) -> dict[str, int]:
    try:
        return {resource: canonical_amount(resource, value) for resource, value in data.items()}
    except QuantityError as error:
        raise DeclarationError(key, str(error)) from None


def _changes(data: dict) -> dict:
    changes = {}
    for key, value in data.items():
        name = RENAMES.get(key, key)
        changes[name] = _amounts(value, key) if name in ("guarantee", "max", "lending_limit") else value
    return changes


def _put(spec: QueueSpec) -> str:
    """``queue_put``, its error's field spelled as the caller's JSON key."""
    try:
        return service.queue_put(spec)
    except DeclarationError as error:
        field = error.field
        for api_key, name in RENAMES.items():
            if field == name or field.startswith(f"{name}."):
                field = api_key + field[len(name) :]
        raise DeclarationError(field, error.reason) from None


def _figures(name: str, user) -> QueueFigures:
    figures = None if "\x00" in name else queue_figures_visible(user).get(name)
    if figures is None:
        raise Http404(f"queue {name} not found")
    return figures


def _service_call(call, name: str) -> None:
    if "\x00" in name:  # never in a name, and PostgreSQL would refuse the query: not found
        raise Http404(f"queue {name!r} not found")
    try:
        call(name)
    except service.QueueNotFound as error:
        raise Http404(str(error)) from None


class QueueListApi(APIView):
    """``GET``: the tree, parents before children, with live figures. ``POST``: create a queue."""

    permission_classes = [*APIView.permission_classes, IsQueueOperator]
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="queues_list",
        summary="The queue tree with guarantees, max, usage, pending demand and borrowed",
        parameters=[
            OpenApiParameter("parent", str, description="Children of this queue."),
            OpenApiParameter("open", bool, description="Open (true) or closed (false) queues."),
            OpenApiParameter("cohort", bool, description="Cohorts (true) or queues that take work (false)."),
        ],
        responses={200: QueueOutput(many=True), 400: ERRORS},
    )
    def get(self, request: Request) -> Response:
        chosen = QueueFilter(request.query_params, queryset=Queue.objects.all())
        if not chosen.is_valid():
            raise serializers.ValidationError(chosen.errors)
        names = set(chosen.qs.values_list("name", flat=True))
        rows = [figures for name, figures in queue_figures_visible(request.user).items() if name in names]
        return Response(QueueOutput(rows, many=True).data)

    @extend_schema(
        operation_id="queues_create",
        summary="Create a queue (operators)",
        request=QueueInput,
        responses={201: QueueOutput, 400: ERRORS, 403: ERRORS},
    )
    def post(self, request: Request) -> Response:
        serializer = QueueInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        name = data.pop("name")
        if Queue.objects.filter(name=name).exists():
            raise DeclarationError("name", f"queue {name} already exists")
        spec = QueueSpec(name=name, source_format="api", field="", declaration=request.data)
        for key, value in _changes(data).items():
            setattr(spec, key, value)
        with transaction.atomic():
            _put(spec)
        return Response(QueueOutput(_figures(name, request.user)).data, status=status.HTTP_201_CREATED)


class QueueDetailApi(APIView):
    permission_classes = [*APIView.permission_classes, IsQueueOperator]
    parser_classes = [JSONParser]

    @extend_schema(
        operation_id="queues_detail",
        summary="A queue with its live figures",
        responses={200: QueueOutput, 404: ERRORS},
    )
    def get(self, request: Request, name: str) -> Response:
        return Response(QueueOutput(_figures(name, request.user)).data)

    @extend_schema(
        operation_id="queues_change",
        summary="Change a queue (operators): only the keys given change",
        request=QueueChangeInput,
        responses={200: QueueOutput, 400: ERRORS, 403: ERRORS, 404: ERRORS},
    )
    def patch(self, request: Request, name: str) -> Response:
        serializer = QueueChangeInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            queue = (
                None if "\x00" in name else Queue.objects.select_related("parent").filter(name=name).first()
            )
            if queue is None:
                raise Http404(f"queue {name} not found")
            changes = _changes(dict(serializer.validated_data))
            _put(service.spec_of(queue, declaration={**queue.declaration, **request.data}, **changes))
        return Response(QueueOutput(_figures(name, request.user)).data)

    @extend_schema(
        operation_id="queues_delete",
        summary="Delete a queue with no children, LocalQueues or active work (operators)",
        request=None,
        responses={204: None, 403: ERRORS, 404: ERRORS, 409: ERRORS},
    )
    def delete(self, request: Request, name: str) -> Response:
        _service_call(service.queue_remove, name)
        return Response(status=status.HTTP_204_NO_CONTENT)


class _QueueStateApi(APIView):
    permission_classes = [*APIView.permission_classes, IsQueueOperator]
    change = staticmethod(service.queue_close)

    def post(self, request: Request, name: str) -> Response:
        _service_call(self.change, name)
        return Response(QueueOutput(_figures(name, request.user)).data)


class QueueCloseApi(_QueueStateApi):
    change = staticmethod(service.queue_close)

    @extend_schema(
        operation_id="queues_close",
        summary="Close a queue: it places nothing new, what runs keeps running (operators)",
        request=None,
        responses={200: QueueOutput, 403: ERRORS, 404: ERRORS},
    )
    def post(self, request: Request, name: str) -> Response:
        return super().post(request, name)


class QueueOpenApi(_QueueStateApi):
    change = staticmethod(service.queue_open)

    @extend_schema(
        operation_id="queues_open",
        summary="Open a closed queue again (operators)",
        request=None,
        responses={200: QueueOutput, 403: ERRORS, 404: ERRORS},
    )
    def post(self, request: Request, name: str) -> Response:
        return super().post(request, name)
