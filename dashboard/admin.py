"""The Django admin over every model, with stock ModelAdmin features only.

History models (SchedulingCycle, GangEvent, BindIntent, BindJournal, QueueSample) are records written by the
scheduler: the admin shows them read-only. Kueue's WorkloadPriorityClass is here too (operators
only: it reorders everyone's gangs). Queues, LocalQueues and ResourceFlavors are in
``admin_queues.py``; Topology and HyperNode in ``admin_topology.py``.
"""

from django import forms
from django.contrib import admin, messages

# The topology's admin registers Topology and HyperNode, deleting through
# services/topology.py; its form checks a gang's topology constraint here.
from dashboard.admin_topology import GangTopologyForm
from dashboard.login import protect_admin_login
from dashboard.pages.access import KILL, RETRY
from dashboard.pages.actions import gangs_act
from dashboard.templatetags.quantities import resources
from scheduler_core.declarations.changes import configured_record
from scheduler_core.declarations.validate import dns_subdomain
from scheduler_core.models import (
    BindIntent,
    BindJournal,
    Gang,
    GangEvent,
    GangGroup,
    Member,
    Node,
    QueueSample,
    SchedulingCycle,
    WorkloadPriorityClass,
)
from scheduler_core.services.tenancy import Actor
from scheduler_core.specs.errors import DeclarationError


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ["name", "ready", "unschedulable", "allocatable_shown", "updated"]
    list_filter = ["ready", "unschedulable"]
    search_fields = ["name"]

    # Amounts as the pages display them (cpu 16.5, memory 244Gi), the exact form on hover.
    @admin.display(description="allocatable")
    def allocatable_shown(self, node: Node):
        return resources(node.allocatable) or "-"


@admin.register(GangGroup)
class GangGroupAdmin(admin.ModelAdmin):
    list_display = ["key", "members", "created"]
    search_fields = ["key"]


class MemberInline(admin.TabularInline):
    model = Member
    fields = ["namespace", "name", "phase", "node", "reserved_node", "priority"]
    extra = 0
    show_change_link = True


@admin.register(Gang)
class GangAdmin(admin.ModelAdmin):
    form = GangTopologyForm  # a topology constraint is checked as the API checks it
    list_display = [
        "namespace", "name", "phase", "min_member", "total_number", "mode", "style", "queue",
        "priority", "submitter", "satisfied", "reason", "created",
    ]  # fmt: skip
    list_filter = [
        "phase",
        "mode",
        "style",
        "placement",
        "queue",
        "satisfied",
        "fallen_back",
        "restart_policy",
        "source_format",
        "provisional",
    ]
    search_fields = ["namespace", "name", "submitter", "message"]
    date_hierarchy = "created"
    list_select_related = ["group"]
    raw_id_fields = ["group"]
    # The scheduler's estimate (services/runtimes.py keeps it): shown, never edited.
    readonly_fields = ["runtime_estimate_s", "runtime_source", "runtime_limit_s", "runtime_key"]
    inlines = [MemberInline]
    actions = ["retry_selected", "kill_selected"]

    # The same path as the pages' buttons and the API: the operator service, per gang, with the
    # same permission rule (own gang, or retry_gang / kill_gang) and one message per gang.
    @admin.action(description="Retry selected gangs")
    def retry_selected(self, request, queryset):
        self._act(request, queryset, RETRY)

    @admin.action(description="Kill selected gangs")
    def kill_selected(self, request, queryset):
        self._act(request, queryset, KILL)

    def save_model(self, request, obj, form, change):
        """An edit here is a change of an existing gang like any other: its history says who
        changed what (every change, by anyone)."""
        before = {name: form.initial.get(name) for name in form.changed_data} if change else {}
        super().save_model(request, obj, form, change)
        if before:
            configured_record(obj, Actor.of(request.user), "admin", before)

    def _act(self, request, queryset, action: str) -> None:
        keys = [
            f"{ns}/{name}"
            for ns, name in queryset.order_by("namespace", "name").values_list("namespace", "name")
        ]
        for result in gangs_act(user=request.user, action=action, keys=keys):
            self.message_user(request, result.message, messages.SUCCESS if result.ok else messages.ERROR)


@admin.register(Member)
class MemberAdmin(admin.ModelAdmin):
    list_display = ["namespace", "name", "gang", "phase", "node", "reserved_node", "priority", "created"]
    list_filter = ["phase", "terminating", "preemptible"]
    search_fields = ["namespace", "name", "node", "gang__name"]
    list_select_related = ["gang"]
    raw_id_fields = ["gang"]


@admin.register(SchedulingCycle)
class SchedulingCycleAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "started_at",
        "duration_s",
        "pods_considered",
        "pods_bound",
        "units_parked",
        "epoch",
        "worker",
    ]
    list_filter = ["worker"]
    search_fields = ["worker"]
    date_hierarchy = "started_at"


@admin.register(GangEvent)
class GangEventAdmin(ReadOnlyAdmin):
    list_display = ["created", "gang", "kind", "reason", "cycle", "published_at"]
    list_filter = ["kind"]
    search_fields = ["gang__namespace", "gang__name", "reason"]
    list_select_related = ["gang"]
    date_hierarchy = "created"


@admin.register(BindJournal)
class BindJournalAdmin(ReadOnlyAdmin):
    list_display = ["created", "member", "node", "state", "epoch", "cycle", "gang", "error"]
    list_filter = ["state"]
    search_fields = ["member__namespace", "member__name", "node", "error"]
    list_select_related = ["member", "gang"]


@admin.register(BindIntent)
class BindIntentAdmin(ReadOnlyAdmin):
    """A cycle's binds for one gang, journaled before they were made (services/journal.py)."""

    list_display = ["created", "gang", "state", "epoch", "cycle", "pods", "error"]
    list_filter = ["state"]
    search_fields = ["gang__namespace", "gang__name", "error"]
    list_select_related = ["gang"]

    @admin.display(description="pods")
    def pods(self, intent: BindIntent) -> int:
        return len(intent.member_ids)


@admin.register(QueueSample)
class QueueSampleAdmin(ReadOnlyAdmin):
    list_display = [
        "minute",
        "queue",
        "path",
        "open",
        "usage_shown",
        "fair_share_shown",
        "pending_shown",
        "cycle",
    ]
    list_filter = ["open"]
    search_fields = ["queue", "path"]
    date_hierarchy = "minute"

    @admin.display(description="usage")
    def usage_shown(self, sample: QueueSample):
        return resources(sample.usage) or "-"

    @admin.display(description="fair share")
    def fair_share_shown(self, sample: QueueSample):
        return resources(sample.fair_share) or "-"

    @admin.display(description="pending")
    def pending_shown(self, sample: QueueSample):
        return resources(sample.pending) or "-"


class WorkloadPriorityClassForm(forms.ModelForm):
    class Meta:
        model = WorkloadPriorityClass
        fields = ["name", "value", "description"]

    def clean_name(self):
        """The name a label names: held to what a manifest's ``metadata.name`` may be."""
        try:
            return dns_subdomain(self.cleaned_data["name"], "name")
        except DeclarationError as error:
            raise forms.ValidationError(error.reason) from None


# Kueue's classes, as operators apply them; a change here gives the value to gangs applied from
# now on (a gang keeps the priority it was applied with, as a Kueue workload keeps its own).
@admin.register(WorkloadPriorityClass)
class WorkloadPriorityClassAdmin(admin.ModelAdmin):
    form = WorkloadPriorityClassForm
    list_display = ["name", "value", "description", "updated"]
    search_fields = ["name", "description"]

    def get_readonly_fields(self, request, obj=None):
        return ["name"] if obj is not None else []


# The queue tree's admin, checked by services/queues.py (a module of its own: it is long).
from dashboard import admin_queues  # noqa: E402, F401

# The admin's login is a sign-in door too: a refused attempt says why, with 429 (dashboard/login.py).
protect_admin_login(admin.site)
