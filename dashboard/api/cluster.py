"""Cluster-wide reads: nodes with their usage, and the capacity summary.

Amounts are the engine's canonical integers: milli-CPU for ``cpu``, bytes for memory and
storage, counts for everything else.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors

RESOURCE_MAP = serializers.DictField(child=serializers.IntegerField())


class NodeListApi(APIView):
    class NodeOutput(serializers.Serializer):
        name = serializers.CharField()
        allocatable = serializers.DictField(child=serializers.IntegerField())
        used = serializers.DictField(
            child=serializers.IntegerField(),
            help_text="Requested by bound active pods, gangsched's and (on Kubernetes) other schedulers'.",
        )
        external = serializers.DictField(
            child=serializers.IntegerField(),
            help_text="Of which other schedulers' pods (Kubernetes backend).",
        )
        pods = serializers.IntegerField()
        labels = serializers.DictField(child=serializers.CharField())
        domains = serializers.DictField(
            child=serializers.CharField(allow_null=True),
            help_text="Per level (node-label key) of every topology, the node's domain there; "
            "null: in no domain of that level. Empty without a topology.",
        )
        taints = serializers.ListField(child=serializers.DictField())
        unschedulable = serializers.BooleanField(help_text="Cordoned.")
        ready = serializers.BooleanField()

    @extend_schema(
        operation_id="nodes_list",
        summary="Nodes: allocatable, used by bound active pods, pods, cordon and readiness",
        responses={200: NodeOutput(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(self.NodeOutput(selectors.node_usage(domains=True), many=True).data)


class ClusterApi(APIView):
    class ClusterOutput(serializers.Serializer):
        nodes = inline_serializer(
            "ClusterNodes",
            {
                "total": serializers.IntegerField(),
                "ready": serializers.IntegerField(),
                "schedulable": serializers.IntegerField(),
            },
        )
        resources = serializers.DictField(
            child=inline_serializer(
                "ResourceCapacity",
                {
                    "capacity": serializers.IntegerField(),
                    "used": serializers.IntegerField(),
                    "free": serializers.IntegerField(),
                },
            ),
            help_text="Per resource: capacity of ready, uncordoned nodes; used by bound active pods; free.",
        )
        gangsByPhase = serializers.DictField(child=serializers.IntegerField())
        pods = serializers.IntegerField(help_text="Bound active pods.")
        pendingDemand = serializers.DictField(
            child=serializers.IntegerField(),
            help_text="Per resource: the summed requests of the pods the latest scheduling cycle "
            "left pending (cluster-wide, like capacity); empty before the first cycle.",
        )

    @extend_schema(
        operation_id="cluster_summary",
        summary="Capacity, used, free and pending demand per resource; the gangs the user may see, by phase",
        responses={200: ClusterOutput},
    )
    def get(self, request: Request) -> Response:
        return Response(self.ClusterOutput(selectors.cluster_summary(user=request.user)).data)
