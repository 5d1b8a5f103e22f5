"""Topology endpoints: every topology with its levels and domains for everyone
signed in; delete for operators (``scheduler_core.change_topology``). Topologies are created and
changed by applying their manifests (``POST /api/v1/manifests/``: Kueue's or KAI's ``Topology``,
Volcano's ``HyperNode``), which only operators may do.

Each domain's figures are the engine's canonical integers, as the node endpoints answer them.
"""

from __future__ import annotations

from django.db import transaction
from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from scheduler_core.declarations.cluster import TOPOLOGY_PERMISSION
from scheduler_core.reads.topology_domains import HYPERNODE_TOPOLOGY
from scheduler_core.reads.topology_figures import topology_views
from scheduler_core.services import topology as service

from .exceptions import ERRORS


class IsTopologyOperator(BasePermission):
    """Reads for everyone signed in; deletes with ``scheduler_core.change_topology`` (operators)."""

    message = "Only operators may change the cluster's topology."

    def has_permission(self, request, view) -> bool:
        return request.method in ("GET", "HEAD", "OPTIONS") or request.user.has_perm(TOPOLOGY_PERMISSION)


_DOMAIN = inline_serializer(
    "TopologyDomain",
    {
        "nodes": serializers.IntegerField(),
        "allocatable": serializers.DictField(child=serializers.IntegerField()),
        "free": serializers.DictField(child=serializers.IntegerField()),
    },
)
_LEVEL = inline_serializer(
    "TopologyLevelDomains",
    {
        "domains": serializers.DictField(child=_DOMAIN, help_text="Label value -> its nodes' figures."),
        "outside": serializers.IntegerField(help_text="Nodes without the level's label: in no domain."),
    },
)


class TopologyOutput(serializers.Serializer):
    name = serializers.CharField()
    levels = serializers.ListField(child=serializers.CharField(), help_text="Node-label keys, widest first.")
    sourceFormat = serializers.CharField(source="source_format")  # noqa: N815 (the API's camelCase)
    domains = serializers.DictField(
        child=_LEVEL, help_text="Per level: its domains, with free and allocatable."
    )
    declaration = serializers.DictField(help_text="The manifest it was applied as (HyperNodes: their names).")
    created = serializers.DateTimeField(allow_null=True)


def _view(name: str):
    views = [] if "\x00" in name else topology_views(name)
    if not views:
        raise Http404(f"topology {name} not found")
    return views[0]


class TopologyListApi(APIView):
    @extend_schema(
        operation_id="topologies_list",
        summary="The cluster's topologies with their levels and each level's domains",
        responses={200: TopologyOutput(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response(TopologyOutput(topology_views(), many=True).data)


class TopologyDetailApi(APIView):
    permission_classes = [*APIView.permission_classes, IsTopologyOperator]

    @extend_schema(
        operation_id="topologies_detail",
        summary="A topology with its levels and each level's domains",
        responses={200: TopologyOutput, 404: ERRORS},
    )
    def get(self, request: Request, name: str) -> Response:
        return Response(TopologyOutput(_view(name)).data)

    @extend_schema(
        operation_id="topologies_delete",
        summary="Delete a topology no ResourceFlavor names and no active gang uses (operators)",
        request=None,
        responses={204: None, 403: ERRORS, 404: ERRORS, 409: ERRORS},
    )
    def delete(self, request: Request, name: str) -> Response:
        if name == HYPERNODE_TOPOLOGY and _view(name):
            raise service.TopologyInUse(
                f"{HYPERNODE_TOPOLOGY} is made by Volcano's HyperNodes: delete them (manage.py delete -f)"
            )
        if "\x00" in name:
            raise Http404(f"topology {name!r} not found")
        try:
            with transaction.atomic():
                service.topology_remove(name)
        except service.TopologyNotFound as error:
            raise Http404(str(error)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)
