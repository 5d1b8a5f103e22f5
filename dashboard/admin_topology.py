"""The admin of the cluster's topology: Topology and Volcano's HyperNodes, read-only.

Topologies are declared by manifests (``manage.py apply -f``, the API's manifest endpoint), so
that ``services/topology.py`` checks every change against the whole set (duplicate levels, a
cycle of HyperNodes); the admin shows each one as applied (its levels, its domains, the
declaration) and deletes through the same service, which refuses a topology still in use with a
message saying what holds it.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.utils.html import format_html

from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.models import Gang, HyperNode, Topology
from scheduler_core.reads.topology_figures import topology_views
from scheduler_core.services import topology as service


class GangTopologyForm(forms.ModelForm):
    """The Gang admin's form: a topology constraint is checked as the API checks it (a level no
    topology has, a topology that does not exist: a form error on that field, nothing saved)."""

    class Meta:
        model = Gang
        fields = "__all__"

    def clean(self):
        data = super().clean()
        fields = ("topology_required", "topology_preferred", "topology_name", "topology_exclusive")
        if self.errors or not any(name in self.changed_data for name in fields):
            return data
        required, preferred, name = (data.get(field) or "" for field in fields[:3])
        if data.get("topology_exclusive") and not required:
            self.add_error("topology_exclusive", "exclusive placement needs topology_required")
            return data
        known = service.known_topologies()
        for args, field in (
            (("", "", name), "topology_name"),
            ((required, "", name), "topology_required"),
            ((required, preferred, name), "topology_preferred"),
        ):
            try:
                service.constraint_check(*args, field, known)
            except DeclarationError as error:
                self.add_error(field, error.reason)
                break
        return data


class _Declared(admin.ModelAdmin):
    """Shown as applied; only deleted here (a change is a manifest applied again)."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="declaration")
    def declaration_shown(self, obj):
        return format_html("<pre>{}</pre>", json.dumps(obj.declaration, indent=2, sort_keys=True))


@admin.register(Topology)
class TopologyAdmin(_Declared):
    list_display = ["name", "levels_shown", "source_format", "updated"]
    list_filter = ["source_format"]
    search_fields = ["name"]
    readonly_fields = ["name", "levels_shown", "source_format", "domains_shown", "declaration_shown"]
    fields = readonly_fields

    @admin.display(description="levels (widest first)")
    def levels_shown(self, obj):
        return " > ".join(obj.levels)

    @admin.display(description="domains per level")
    def domains_shown(self, obj):
        views = topology_views(obj.name)
        if not views:
            return "-"
        return format_html(
            "<pre>{}</pre>",
            "\n".join(
                f"{level}: {len(figures['domains'])} domains, {figures['outside']} nodes outside"
                for level, figures in views[0].domains.items()
            ),
        )

    def delete_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, object_id)
        if obj is not None and request.method == "POST":
            try:
                service.topology_remove(obj.name)
            except service.TopologyInUse as error:
                self.message_user(request, str(error), messages.ERROR)
                return HttpResponseRedirect(request.path.removesuffix("delete/") + "change/")
            self.message_user(request, f"topology {obj.name} deleted", messages.SUCCESS)
            return HttpResponseRedirect("../../")
        return super().delete_view(request, object_id, extra_context)

    def delete_model(self, request, obj):
        service.topology_remove(obj.name)

    def delete_queryset(self, request, queryset):
        for name in queryset.values_list("name", flat=True):
            try:
                service.topology_remove(name)
            except service.TopologyInUse as error:
                self.message_user(request, str(error), messages.ERROR)


@admin.register(HyperNode)
class HyperNodeAdmin(_Declared):
    list_display = ["name", "tier", "tier_name", "members_shown", "updated"]
    list_filter = ["tier"]
    search_fields = ["name"]
    readonly_fields = ["name", "tier", "tier_name", "members_shown", "declaration_shown"]
    fields = readonly_fields

    @admin.display(description="tier name")
    def tier_name(self, obj):
        return ((obj.declaration or {}).get("spec") or {}).get("tierName", "")

    @admin.display(description="members")
    def members_shown(self, obj):
        shown = []
        for member in obj.members:
            selector = member.get("selector") or {}
            how, value = next(iter(selector.items()), ("", {}))
            shown.append(f"{member.get('type')} {how} {json.dumps(value, sort_keys=True)}")
        return "; ".join(shown)
