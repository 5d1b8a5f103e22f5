"""``POST /api/v1/manifests/``: apply Kubernetes manifests (PodGroup, Volcano/kube-batch jobs,
Koordinator and YuniKorn annotated pods, ...) sent as YAML or JSON, as ``kubectl apply -f``."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from scheduler_core.declarations import DeclarationError, documents_parse, manifests_apply
from scheduler_core.declarations.cluster import OPERATOR_KINDS
from scheduler_core.declarations.documents import documents_expand
from scheduler_core.declarations.validate import MAX_MANIFEST_BYTES

from . import dry_run
from .exceptions import ERRORS, PayloadTooLarge
from .permissions import api_actor
from .serializers import GangOutput
from .throttles import SubmitThrottle


class _ManifestParser(BaseParser):
    """The body as bytes, read no further than the size limit (so a huge body is never held)."""

    def parse(self, stream, media_type=None, parser_context=None) -> bytes:
        maximum = getattr(settings, "GANGSCHED_MAX_MANIFEST_BYTES", MAX_MANIFEST_BYTES)
        body = stream.read(maximum + 1) if stream is not None else b""
        if len(body) > maximum:
            raise PayloadTooLarge(f"the manifest is over the limit of {maximum} bytes")
        return body


class YAMLParser(_ManifestParser):
    media_type = "application/yaml"


class TextYAMLParser(_ManifestParser):
    media_type = "text/yaml"


class XYAMLParser(_ManifestParser):
    media_type = "application/x-yaml"


class JSONManifestParser(_ManifestParser):
    media_type = "application/json"


class ManifestApplyApi(APIView):
    """A submitter creates objects and changes only their own gangs and pods; a manifest that
    touches anyone else's answers 404, exactly as a missing gang, and applies nothing."""

    parser_classes = [YAMLParser, TextYAMLParser, XYAMLParser, JSONManifestParser]
    throttle_classes = [SubmitThrottle]

    class ManifestApplyOutput(serializers.Serializer):
        lines = serializers.ListField(child=serializers.CharField(), help_text="kubectl-style lines.")
        gangs = GangOutput(many=True)
        pods = serializers.IntegerField(help_text="Pods created or updated.")

    @extend_schema(
        operation_id="manifests_apply",
        summary="Apply YAML or JSON manifests (multi-document)",
        request={
            "application/yaml": OpenApiTypes.STR,
            "text/yaml": OpenApiTypes.STR,
            "application/x-yaml": OpenApiTypes.STR,
            "application/json": OpenApiTypes.OBJECT,
        },
        parameters=[dry_run.PARAMETER],
        responses={
            201: ManifestApplyOutput,
            400: ERRORS,
            404: ERRORS,
            413: ERRORS,
            429: ERRORS,
        },
        examples=[
            OpenApiExample(
                "PodGroup",
                value="apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                "metadata: {name: trainer, namespace: team-a}\nspec: {minMember: 4}\n",
                request_only=True,
                media_type="application/yaml",
            )
        ],
    )
    def post(self, request: Request) -> Response:
        dry = dry_run.requested(request)  # a bad option is refused before the body is read
        body = request.data
        if not isinstance(body, bytes) or not body.strip():
            raise DeclarationError("body", "the manifest is empty")
        try:
            documents = documents_parse(body)
        except DeclarationError as error:
            if not error.field:  # a problem of the whole text: size, encoding, syntax
                raise DeclarationError("body", error.reason) from None
            raise
        if not documents:  # only comments, "---" or null: as kubectl, "no objects passed to apply"
            raise DeclarationError("body", "the manifest holds no objects")
        for manifest in documents_expand(documents):  # nodes and priority classes are the operators'
            permission = OPERATOR_KINDS.get((manifest.group, manifest.kind))
            if permission and not request.user.has_perm(permission):
                raise PermissionDenied(f"only operators may apply {manifest.kind} objects")
        if dry:  # the same writes, rolled back once the answer is read: nothing stays or is sent
            with dry_run.rolled_back():
                result = manifests_apply(documents, actor=api_actor(request.user))
                answer = dry_run.answer(self.output(result, request), gangs=result.gangs, user=request.user)
                return Response(answer, status=status.HTTP_201_CREATED)
        with transaction.atomic():  # a refused document leaves nothing of the others behind
            result = manifests_apply(documents, actor=api_actor(request.user))
        return Response(self.output(result, request), status=status.HTTP_201_CREATED)

    def output(self, result, request) -> dict:
        return self.ManifestApplyOutput(
            {"lines": result.lines, "gangs": result.gangs, "pods": result.pods}, context={"request": request}
        ).data
