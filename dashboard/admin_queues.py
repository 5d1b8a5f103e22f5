"""The admin of the queue tree: Queue (with who may submit to it, inline),
LocalQueue and ResourceFlavor.

Every save and delete goes through ``services/queues.py``, as the API and manifests do: the
form is checked by ``queues_check`` (a bad tree is a form error on the field at fault, nothing
saved), the row is written by ``queue_put``, and a queue still needed (children, LocalQueues,
active work) is not deleted, with a message saying what holds it.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect

from dashboard.templatetags.quantities import resources
from scheduler_core.declarations.validate import DeclarationError
from scheduler_core.models import LocalQueue, Queue, QueueAccess, ResourceFlavor
from scheduler_core.services import queues as service
from scheduler_core.specs.queues import FlavorSpec, LocalQueueSpec

#: The form fields a spec's first key stands for.
_FORM_FIELDS = {"name", "parent", "guarantee", "max", "lending_limit", "weight", "cohort"}


class QueueAccessForm(forms.ModelForm):
    class Meta:
        model = QueueAccess
        fields = ["user", "group"]

    def clean(self):
        data = super().clean()
        if bool(data.get("user")) == bool(data.get("group")):
            raise forms.ValidationError("Give a user or a group (exactly one).")
        return data


class QueueAccessInline(admin.TabularInline):
    model = QueueAccess
    form = QueueAccessForm
    extra = 0
    autocomplete_fields = []
    verbose_name = "who may submit (none: everyone)"


class QueueForm(forms.ModelForm):
    class Meta:
        model = Queue
        fields = [
            *("name", "parent", "guarantee", "max", "lending_limit", "weight"),
            *("reclaimable", "open", "cohort", "default_runtime_s"),
        ]

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        name = data.get("name") or self.instance.name
        base = self.instance if self.instance.pk else Queue(name=name, source_format="admin")
        parent = data.get("parent")
        changes = {key: data[key] for key in self.Meta.fields if key in data and key != "parent"}
        changes["parent"] = parent.name if parent else None
        self.spec = service.spec_of(base, **changes)
        try:
            service.queues_check([self.spec])
        except DeclarationError as error:
            key = error.field.split(".", 1)[0]
            self.add_error(key if key in _FORM_FIELDS else None, error.reason)
        return data


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    form = QueueForm
    list_display = [
        "name",
        "parent",
        "guarantee_shown",
        "max_shown",
        "weight",
        "open",
        "reclaimable",
        "cohort",
        "source_format",
    ]
    list_filter = ["open", "reclaimable", "cohort", "source_format"]
    search_fields = ["name"]
    list_select_related = ["parent"]
    inlines = [QueueAccessInline]
    actions = ["close_selected", "open_selected"]

    # Amounts as the pages display them (cpu 16.5, memory 244Gi), the exact form on hover.
    @admin.display(description="guarantee", ordering="guarantee")
    def guarantee_shown(self, queue: Queue):
        return resources(queue.guarantee) or "-"

    @admin.display(description="max", ordering="max")
    def max_shown(self, queue: Queue):
        return resources(queue.max) or "unlimited"

    def get_readonly_fields(self, request, obj=None):
        return ["name"] if obj is not None else []  # a rename would be another queue

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # one at a time, each checked (delete_view)
        return actions

    def save_model(self, request, obj, form, change):
        service.queue_put(form.spec, checked=True)
        saved = Queue.objects.get(name=form.spec.name)
        obj.pk, obj._state.adding = saved.pk, False

    def delete_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, object_id)
        refusal = service.queue_remove_refusal(obj) if obj is not None else None
        if refusal:
            self.message_user(request, refusal, messages.ERROR)
            return HttpResponseRedirect(request.path.removesuffix("delete/") + "change/")
        return super().delete_view(request, object_id, extra_context)

    def delete_model(self, request, obj):
        service.queue_remove(obj.name)

    @admin.action(description="Close selected queues", permissions=["change"])
    def close_selected(self, request, queryset):
        for name in queryset.values_list("name", flat=True):
            service.queue_close(name)
        self.message_user(request, "closed: they place nothing new", messages.SUCCESS)

    @admin.action(description="Open selected queues", permissions=["change"])
    def open_selected(self, request, queryset):
        for name in queryset.values_list("name", flat=True):
            service.queue_open(name)
        self.message_user(request, "opened", messages.SUCCESS)


@admin.register(LocalQueue)
class LocalQueueAdmin(admin.ModelAdmin):
    list_display = ["namespace", "name", "cluster_queue", "updated"]
    search_fields = ["namespace", "name", "cluster_queue__name"]
    list_select_related = ["cluster_queue"]
    fields = ["namespace", "name", "cluster_queue"]

    def get_readonly_fields(self, request, obj=None):
        return ["namespace", "name"] if obj is not None else []

    def save_model(self, request, obj, form, change):
        spec = LocalQueueSpec(obj.namespace, obj.name, obj.cluster_queue.name, "admin", dict(obj.declaration))
        service.local_queue_put(spec)
        obj.pk = LocalQueue.objects.get(namespace=obj.namespace, name=obj.name).pk
        obj._state.adding = False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # one at a time, each checked (delete_view)
        return actions

    def delete_view(self, request, object_id, extra_context=None):
        obj = self.get_object(request, object_id)
        if obj is not None and service.local_queue_active(obj.namespace, obj.name):
            self.message_user(request, service.local_queue_refusal(obj.namespace, obj.name), messages.ERROR)
            return HttpResponseRedirect(request.path.removesuffix("delete/") + "change/")
        return super().delete_view(request, object_id, extra_context)

    def delete_model(self, request, obj):
        service.local_queue_remove(obj.namespace, obj.name)


@admin.register(ResourceFlavor)
class ResourceFlavorAdmin(admin.ModelAdmin):
    list_display = ["name", "node_labels", "updated"]
    search_fields = ["name"]
    fields = ["name", "node_labels"]

    def get_readonly_fields(self, request, obj=None):
        return ["name"] if obj is not None else []

    def save_model(self, request, obj, form, change):
        service.flavor_put(FlavorSpec(obj.name, "admin", dict(obj.node_labels), dict(obj.declaration)))
        obj.pk, obj._state.adding = ResourceFlavor.objects.get(name=obj.name).pk, False

    def delete_model(self, request, obj):
        service.flavor_remove(obj.name)
