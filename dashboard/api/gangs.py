"""Gang endpoints: list and submit, detail, history, and the operator actions retry and kill."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from scheduler_core.engine.model import GangMode, Placement, TimeoutStyle
from scheduler_core.models import GangEvent, RestartPolicy
from scheduler_core.reads import selectors as shared
from scheduler_core.reads.timeouts import gang_timeout_api
from scheduler_core.reads.topology import gang_topology
from scheduler_core.reads.topology_domains import label_key_valid
from scheduler_core.reads.why import gang_why
from scheduler_core.services.operator import gang_kill, gang_retry

from . import dry_run, read_cache, selectors
from .cached_reads import cached_response, not_cached, user_scope
from .exceptions import ERRORS
from .fields import (
    PRIORITY_MAX,
    PRIORITY_MIN,
    LabelNameField,
    ResourceMapField,
    StrictBooleanField,
    StrictIntegerField,
    StrictNumberField,
    SubdomainNameField,
    max_wait_seconds,
    rfc1123_label_error,
    rfc1123_subdomain_error,
)
from .filters import GangFilter, unfiltered
from .gang_submission import submission_write, submit_arguments
from .pagination import ApiPagination
from .parsers import JSONParser
from .permissions import CanKillGang, CanRetryGang, api_actor
from .redacted import context_viewer
from .serializers import (
    EventOutput,
    GangExplanation,
    GangOutput,
    GangRowOutput,
    GangTimeout,
    GangWhy,
    PodInput,
    StrictSerializer,
    TaskInput,
)
from .throttles import SubmitThrottle

DEFAULT_MAX_MIN_MEMBER = 10000
HISTORY_LIMIT = 50


def max_members() -> int:
    return getattr(settings, "GANGSCHED_MAX_MIN_MEMBER", DEFAULT_MAX_MIN_MEMBER)


class GangSubmitInput(StrictSerializer):
    """A gang job: the gang's settings and either its ``pods`` or its ``tasks`` (each task is
    expanded to ``replicas`` pods named ``<gang>-<task>-<index>``, as Volcano names them: pod
    names are unique per namespace, so two jobs with a ``worker`` task must not collide)."""

    namespace = LabelNameField()
    name = SubdomainNameField()
    minMember = StrictIntegerField(min_value=1)
    totalNumber = StrictIntegerField(required=False, allow_null=True, min_value=1)
    minResources = ResourceMapField(required=False)
    mode = serializers.ChoiceField(choices=[m.value for m in GangMode], required=False)
    style = serializers.ChoiceField(choices=[s.value for s in TimeoutStyle], required=False)
    waitSeconds = StrictNumberField(required=False, allow_null=True)
    priority = StrictIntegerField(
        required=False, allow_null=True, min_value=PRIORITY_MIN, max_value=PRIORITY_MAX
    )
    preemptible = StrictBooleanField(required=False)
    queue = SubdomainNameField(max_length=63, required=False)
    placement = serializers.ChoiceField(choices=[p.value for p in Placement], required=False)
    restartPolicy = serializers.ChoiceField(choices=RestartPolicy.values, required=False)
    groups = serializers.ListField(child=serializers.CharField(), required=False, max_length=100)
    # Topology: node-label keys of a topology level, as Kueue's and KAI's annotations.
    topologyRequired = serializers.CharField(
        required=False, allow_blank=True, max_length=316, help_text="All members in one domain of this level."
    )
    topologyPreferred = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=316,
        help_text="The smallest domain that fits, from here up.",
    )
    topologyName = serializers.CharField(
        required=False, allow_blank=True, max_length=253, help_text="The Topology the levels belong to."
    )
    pods = PodInput(many=True, required=False)
    tasks = TaskInput(many=True, required=False)

    def validate_waitSeconds(self, value):  # noqa: N802 (DRF's validate_<field> hook)
        if value is not None and value <= 0:
            raise serializers.ValidationError("must be positive (omit it to wait forever)")
        if value is not None and value > max_wait_seconds():
            raise serializers.ValidationError(
                f"at most {max_wait_seconds()} seconds (omit it to wait forever)"
            )
        return value

    def validate_groups(self, keys: list[str]) -> list[str]:
        for key in keys:
            namespace, _, name = key.partition("/")
            if rfc1123_label_error(namespace) or rfc1123_subdomain_error(name):
                raise serializers.ValidationError(f"{key!r} is not a namespace/name gang key")
        if len(set(keys)) != len(keys):
            raise serializers.ValidationError("a gang is listed twice")
        return keys

    def validate(self, data: dict) -> dict:
        for key in ("topologyRequired", "topologyPreferred"):
            if data.get(key) and not label_key_valid(data[key]):
                raise serializers.ValidationError(
                    {key: f"{data[key]!r} is not a node-label key (prefix/name)"}
                )
        if data.get("topologyName") and not (data.get("topologyRequired") or data.get("topologyPreferred")):
            raise serializers.ValidationError({"topologyName": "names a topology but no level"})
        limit = max_members()
        if ("pods" in data) == ("tasks" in data):
            raise serializers.ValidationError({"pods": "give either pods or tasks (not both, not neither)"})
        pods = data["pods"] if "pods" in data else self._expand(data["name"], data["tasks"], limit)
        if not pods:
            raise serializers.ValidationError({"pods": "a gang needs at least one pod"})
        if len(pods) > limit:
            raise serializers.ValidationError({"pods": f"at most {limit} pods in a gang"})
        names = [pod["name"] for pod in pods]
        duplicate = next((n for i, n in enumerate(names) if n in names[:i]), None)
        if duplicate:
            raise serializers.ValidationError({"pods": f"pod name {duplicate} is used twice"})
        min_member, total = data["minMember"], data.get("totalNumber")
        if min_member > limit:
            raise serializers.ValidationError({"minMember": f"at most {limit}"})
        if total is not None and total > limit:
            raise serializers.ValidationError({"totalNumber": f"at most {limit}"})
        if total is not None and total < min_member:
            raise serializers.ValidationError({"totalNumber": f"{total} is below minMember {min_member}"})
        if total is not None and len(pods) > total:
            raise serializers.ValidationError({"totalNumber": f"{len(pods)} pods but totalNumber is {total}"})
        if total is None and min_member > len(pods):
            reason = f"{min_member} is more than the {len(pods)} pods (set totalNumber if more will come)"
            raise serializers.ValidationError({"minMember": reason})
        data["pods"] = pods
        return data

    @staticmethod
    def _expand(gang: str, tasks: list[dict], limit: int) -> list[dict]:
        if sum(task["replicas"] for task in tasks) > limit:
            raise serializers.ValidationError({"tasks": f"at most {limit} pods in a gang"})
        pods = []
        for task in tasks:
            template = task.get("template", {})
            for index in range(task["replicas"]):
                name = f"{gang}-{task['name']}-{index}"
                if rfc1123_subdomain_error(name):
                    raise serializers.ValidationError({"tasks": f"pod name {name} is too long"})
                labels = {**template.get("labels", {}), "gangsched.io/task": task["name"]}
                pods.append({**template, "name": name, "labels": labels})
        return pods


class GangListSubmitApi(generics.ListAPIView):
    """``GET``: the gangs the user may see, filtered and paginated. ``POST``: submit a gang job."""

    class GangListOutput(GangRowOutput):
        pass

    serializer_class = GangListOutput
    filterset_class = GangFilter
    pagination_class = ApiPagination
    throttle_classes = [SubmitThrottle]
    parser_classes = [JSONParser]

    def get_queryset(self):
        plain = unfiltered(self.request) and not getattr(self, "swagger_fake_view", False)
        return selectors.gang_list(user=self.request.user, plain=plain)

    @extend_schema(
        operation_id="gangs_list",
        summary="List gangs",
        responses={200: GangListOutput, 400: ERRORS, 404: ERRORS},  # 404: a cursor that does not decode
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return cached_response(request) or super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="gangs_submit",
        summary="Submit a gang job",
        request=GangSubmitInput,
        parameters=[dry_run.PARAMETER],
        responses={201: GangOutput, 400: ERRORS, 404: ERRORS, 409: ERRORS, 429: ERRORS},
    )
    def post(self, request: Request) -> Response:
        dry = dry_run.requested(request)  # a bad option is refused before the body is read
        serializer = GangSubmitInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        arguments = submit_arguments(data, submitter=request.user.get_username(), declaration=request.data)
        arguments["actor"] = api_actor(request.user)
        if dry:  # the same writes, rolled back once the answer is read: nothing stays or is sent
            with dry_run.rolled_back():
                gang = submission_write(data, arguments)
                output = GangRowOutput(gang, context={"request": request}).data
                answer = dry_run.answer(output, gangs=[gang], user=request.user)
                return Response(answer, status=201)
        gang = submission_write(data, arguments)
        # Committed: runs at once (in a test's transaction, at its end). Read your writes.
        by = user_scope(request)
        transaction.on_commit(lambda: read_cache.changed_here(gang.submitter, by=by))
        output = GangRowOutput(gang, context={"request": request}).data  # GangOutput's JSON, faster
        return Response(output, status=status.HTTP_201_CREATED)


class GangDetailApi(APIView):
    class GangDetailOutput(GangOutput):
        minResources = serializers.JSONField(source="min_resources")
        preemptible = serializers.BooleanField()
        sourceFormat = serializers.CharField(source="source_format")
        waitStarted = serializers.DateTimeField(source="wait_started", allow_null=True)
        fallenBack = serializers.BooleanField(source="fallen_back")
        progress = inline_serializer(
            "GangProgress",
            {
                "members": serializers.IntegerField(),
                "bound": serializers.IntegerField(),
                "reserved": serializers.IntegerField(),
                "pending": serializers.IntegerField(),
                "minMember": serializers.IntegerField(source="min_member"),
            },
        )
        groupProgress = inline_serializer(
            "GangGroupProgress",
            {
                "gang": serializers.CharField(source="key"),
                "state": serializers.CharField(help_text="Phase, Provisional, or NotSubmitted."),
                "minMember": serializers.IntegerField(source="min_member", allow_null=True),
                "bound": serializers.IntegerField(),
            },
            many=True,
        )
        explanation = GangExplanation(allow_null=True)
        why = GangWhy(allow_null=True, help_text="The explanation, with the nodes each reason rules out.")
        timeout = GangTimeout()
        members = inline_serializer(
            "GangMember",
            {
                "name": serializers.CharField(),
                "phase": serializers.CharField(),
                "node": serializers.CharField(allow_null=True),
                "reservedNode": serializers.CharField(source="reserved_node", allow_null=True),
                "requests": serializers.JSONField(),
                "terminating": serializers.BooleanField(),
                "startedAt": serializers.DateTimeField(source="started_at", allow_null=True),
                "finishedAt": serializers.DateTimeField(source="finished_at", allow_null=True),
                "domains": serializers.DictField(
                    child=serializers.CharField(allow_null=True),
                    help_text="Where it is bound: per topology level, its node's domain (null: none).",
                ),
            },
            many=True,
            source="members_sorted",
        )
        history = EventOutput(many=True, help_text=f"The latest {HISTORY_LIMIT} events, oldest first.")
        topology = inline_serializer(
            "GangTopology",
            {
                "required": serializers.CharField(allow_null=True, help_text="Level: all in one domain."),
                "preferred": serializers.CharField(
                    allow_null=True, help_text="Level: preferably one domain."
                ),
                "topology": serializers.CharField(allow_null=True, help_text="The Topology named, if any."),
                "exclusive": serializers.BooleanField(help_text="No other exclusive gang in its domain."),
                "spans": serializers.DictField(
                    child=serializers.IntegerField(), help_text="Per level: domains the bound members span."
                ),
            },
        )

    @extend_schema(
        operation_id="gangs_detail",
        summary="A gang with its members, progress and history",
        responses={200: GangDetailOutput, 404: ERRORS},
    )
    def get(self, request: Request, namespace: str, name: str) -> Response:
        hit = cached_response(request)
        if hit is not None:
            return hit
        gang = selectors.gang_get(user=request.user, namespace=namespace, name=name)
        if gang.group_id is not None:  # shows its group's gangs, maybe another's: never cached
            not_cached(request)
        viewer = context_viewer({"request": request})
        gang.progress = shared.gang_progress(gang)
        gang.groupProgress = [row for row in shared.gang_group_progress(gang) if viewer.shown(row["key"])]
        gang.members_sorted = list(shared.gang_members(gang))
        topology = gang_topology(gang, gang.members_sorted)
        for member, domains in zip(gang.members_sorted, topology["domains"], strict=True):
            member.domains = domains
        gang.topology = {**topology["constraint"], "spans": topology["spans"]}
        viewer.gangs([gang], with_details=True)  # for this answer only: never saved
        gang.explanation = (
            {"reason": gang.reason, "message": gang.message, "details": gang.details} if gang.reason else None
        )
        gang.why = gang_why(gang)
        gang.timeout = gang_timeout_api(gang)
        gang.history = shared.gang_events(gang, limit=HISTORY_LIMIT)
        return Response(self.GangDetailOutput(gang, context={"request": request}).data)


class GangEventsApi(generics.ListAPIView):
    """A gang's history, newest first."""

    class GangEventOutput(EventOutput):
        pass

    serializer_class = GangEventOutput
    pagination_class = ApiPagination
    filterset_class = None

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no gang to look up
            return GangEvent.objects.none()
        gang = selectors.gang_get(user=self.request.user, **self.kwargs)
        return selectors.event_visible(user=self.request.user).filter(gang=gang)

    @extend_schema(
        operation_id="gangs_events",
        summary="A gang's events, newest first",
        responses={200: GangEventOutput, 404: ERRORS},
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)


class _GangActionApi(APIView):
    def act(self, request: Request, namespace: str, name: str, action) -> Response:
        gang = selectors.gang_get(user=request.user, namespace=namespace, name=name)
        self.check_object_permissions(request, gang)
        gang = action(gang=gang, by=request.user.get_username())
        read_cache.changed_here(gang.submitter, by=user_scope(request))  # committed: seen at once here
        return Response(GangOutput(gang, context={"request": request}).data)


class GangRetryApi(_GangActionApi):
    permission_classes = [*APIView.permission_classes, CanRetryGang]

    @extend_schema(
        operation_id="gangs_retry",
        summary="Retry a TimedOut or Failed gang",
        request=None,
        responses={200: GangOutput, 403: ERRORS, 404: ERRORS, 409: ERRORS},
    )
    def post(self, request: Request, namespace: str, name: str) -> Response:
        return self.act(request, namespace, name, gang_retry)


class GangKillApi(_GangActionApi):
    permission_classes = [*APIView.permission_classes, CanKillGang]

    @extend_schema(
        operation_id="gangs_kill",
        summary="Kill a gang: its pods are deleted and it is never scheduled again",
        request=None,
        responses={200: GangOutput, 403: ERRORS, 404: ERRORS, 409: ERRORS},
    )
    def post(self, request: Request, namespace: str, name: str) -> Response:
        return self.act(request, namespace, name, gang_kill)
