"""The API's part of the one redaction rule (``scheduler_core/reads/redaction.py``): a gang's
explanation, its group's key and its history as the request's user may read them. Serializers
find the viewer in their context's request (one per request, so a list looks the keys its rows
name up once); without a request nothing that names other work is shown."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from scheduler_core.reads.redaction import Viewer

from .permissions import viewer_of

_ATTRIBUTE = "_gangsched_viewer"


def context_viewer(context: dict) -> Viewer:
    """The viewer of the serializer's request (kept on the request), else one who sees nothing
    of others."""
    request = context.get("request")
    if request is None:
        return Viewer("", sees_all=False)
    viewer = getattr(request, _ATTRIBUTE, None)
    if viewer is None:
        viewer = viewer_of(getattr(request, "user", None))
        setattr(request, _ATTRIBUTE, viewer)
    return viewer


def gangs_learn(context: dict, gangs) -> None:
    """Look up, at once, the keys the gangs' messages and group keys name."""
    groups = (getattr(gang.group, "key", None) for gang in gangs if gang.group is not None)
    context_viewer(context).learn(*(gang.message for gang in gangs), *groups)


def group_key(context: dict, gang) -> str | None:
    group = gang.group
    return None if group is None else context_viewer(context).group_key(group.key)


@extend_schema_field(serializers.CharField())
class MessageField(serializers.Field):
    """``GangOutput.message``: the engine's explanation, redacted for a submitter when it names
    another's work."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, gang):
        return context_viewer(self.context).message(gang.reason, gang.message)


@extend_schema_field(serializers.CharField(allow_null=True))
class GroupKeyField(serializers.Field):
    """``GangOutput.group``: its gang group's key, which lists the group's gangs."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, gang):
        return group_key(self.context, gang)


class EventList(serializers.ListSerializer):
    """A list of events looks the keys their texts and details name up in one go."""

    def to_representation(self, data):
        events = list(data.all() if hasattr(data, "all") else data)
        context_viewer(self.context).learn(*(e.reason for e in events), *(e.details for e in events))
        return super().to_representation(events)


def event_redacted(context: dict, event, data: dict) -> dict:
    viewer = context_viewer(context)
    if not viewer.sees_all:
        data["reason"] = viewer.event_text(event.kind, event.reason)
        data["details"] = viewer.details(event.details)
    return data
