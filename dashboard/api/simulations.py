"""``/api/v1/simulations/``: trace replay runs. Everybody signed in may list and read them; only
users with ``dashboard.add_simulationrun`` (the operators group) may start one."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from dashboard.models import SimulationRun, SimulationRuntimes
from dashboard.simulation_start import simulation_run_create
from dashboard.simulations import (
    MAX_OVERTAKE_LIMIT_S,
    POLICY_NAMES,
    cluster_check,
    trace_check,
)

from .exceptions import ERRORS
from .pagination import NumberedPagination
from .parsers import JSONParser

START_SIMULATION = "dashboard.add_simulationrun"


class CanStartSimulation(BasePermission):
    message = "Only operators may start simulations."

    def has_permission(self, request, view) -> bool:
        return request.method != "POST" or request.user.has_perm(START_SIMULATION)


class SimulationInput(serializers.Serializer):
    """A shared trace by name (``trace``) or a gangsched/Tiresias CSV as text (``trace_csv``)."""

    trace = serializers.CharField(required=False, allow_blank=False)
    trace_csv = serializers.CharField(required=False, trim_whitespace=False)
    trace_name = serializers.CharField(required=False, max_length=255)
    cluster = serializers.CharField(max_length=1000)
    policies = serializers.ListField(
        child=serializers.ChoiceField(choices=POLICY_NAMES), required=False, max_length=len(POLICY_NAMES)
    )
    overtake_limit_s = serializers.FloatField(
        required=False,
        allow_null=True,
        min_value=0.0,
        max_value=MAX_OVERTAKE_LIMIT_S,
        help_text="gangsched's queue order: least work first, never passed by a job submitted more "
        "than this many seconds later; absent or null: 3600; 0: FIFO",
    )
    runtimes = serializers.ChoiceField(
        choices=SimulationRuntimes.values,
        default=SimulationRuntimes.ORACLE,
        help_text="what the engine is told of runtimes: oracle (the trace's exact ones), limit (a "
        "user's limit, runtime x U[1, 10]) or learned (the submitter's last two runs of the same "
        "job, else the limit); the trace's runtimes always decide when a job ends",
    )

    def validate_cluster(self, value: str) -> str:
        try:
            cluster_check(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from error
        return value

    def validate(self, data: dict) -> dict:
        field = "trace_csv" if "trace_csv" in data else "trace"
        try:
            trace_check(
                shared=data.get("trace"),
                upload_name=data.get("trace_name"),
                upload_text=data.get("trace_csv"),
            )
        except ValueError as error:
            raise serializers.ValidationError({field: str(error)}) from error
        return data


class SimulationOutput(serializers.ModelSerializer):
    trace = serializers.CharField(source="trace_name")
    cluster = serializers.CharField(source="cluster_spec")
    requested_by = serializers.CharField(source="requested_by.username", default=None)
    plots = serializers.SerializerMethodField()

    class Meta:
        model = SimulationRun
        fields = [
            "id",
            "status",
            "progress",
            "trace",
            "cluster",
            "policies",
            "overtake_limit_s",
            "runtimes",
            "requested_by",
            "created",
            "started",
            "finished",
            "error",
            "results",
            "plots",
        ]

    def get_plots(self, run: SimulationRun) -> list[str]:
        return [reverse("dashboard:simulation-plot", args=[run.pk, name]) for name in run.plots]


class SimulationListStartApi(generics.ListAPIView):
    """Past and running simulations, newest first; POST starts one (operators only)."""

    serializer_class = SimulationOutput
    pagination_class = NumberedPagination
    permission_classes = [*generics.ListAPIView.permission_classes, CanStartSimulation]
    parser_classes = [JSONParser]
    queryset = SimulationRun.objects.select_related("requested_by").defer("trace_text")

    @extend_schema(
        operation_id="simulations_list",
        summary="Simulation runs",
        responses={200: SimulationOutput(many=True), 404: ERRORS},  # 404: a page past the last
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="simulations_start",
        summary="Start a simulation (operators)",
        request=SimulationInput,
        responses={202: SimulationOutput, 400: ERRORS, 403: ERRORS},
    )
    def post(self, request: Request) -> Response:
        data = SimulationInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        run = simulation_run_create(
            user=request.user,
            shared=values.get("trace"),
            upload_name=values.get("trace_name"),
            upload_text=values.get("trace_csv"),
            cluster=values["cluster"],
            policies=values.get("policies", []),
            overtake_limit_s=values.get("overtake_limit_s"),
            runtimes=values["runtimes"],
        )
        return Response(SimulationOutput(run).data, status=status.HTTP_202_ACCEPTED)


class SimulationDetailApi(generics.RetrieveAPIView):
    serializer_class = SimulationOutput
    queryset = SimulationRun.objects.select_related("requested_by").defer("trace_text")

    @extend_schema(
        operation_id="simulations_retrieve",
        summary="One simulation run with its results",
        responses={200: SimulationOutput, 404: ERRORS},
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)
