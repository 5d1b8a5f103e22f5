"""Volcano Jobs' restart behaviour, carried to the PodGroups their controller makes.

Volcano's job controller makes a PodGroup per Job and the Job's pods: the gang comes from the
PodGroup (``mirror.DeclarationMirror``), what to do when a pod fails from the Job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Up a layer on purpose: a Volcano Job's lifecycle policies are the format's rule
# (declarations/volcano.py), read by the backend when it acts on a Job's pods.
from scheduler_core.declarations import volcano

from . import convert
from .mirror import ADDED, DELETED, MODIFIED, DeclarationMirror


class VolcanoJobs:
    """Volcano Jobs' restart behaviour (maxRetry, policies), carried to the PodGroups they own.

    Volcano's job controller makes a PodGroup per Job (owned by it) and the Job's pods; the gang
    comes from the PodGroup, but what to do when a pod fails is the Job's. The PodGroup mirror
    asks ``prepare`` to add the owning Job's lifecycle annotation (``volcano.job_lifecycle``)
    before applying; when a Job arrives or changes after its PodGroup, its PodGroups are applied
    again. Both mirrors run under the watcher's one lock, so this needs none of its own.
    """

    def __init__(self) -> None:
        self.lifecycles: dict[str, str] = {}  # job uid -> annotation value
        self.podgroups: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.podgroup_mirror: DeclarationMirror | None = None

    @staticmethod
    def owner(obj: Mapping[str, Any]) -> str:
        for ref in convert.metadata(obj).get("ownerReferences") or []:
            if ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith("batch.volcano.sh/"):
                return ref.get("uid") or ""
        return ""

    def prepare(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        self.podgroups[convert.key_of(obj)] = obj
        lifecycle = self.lifecycles.get(self.owner(obj))
        if lifecycle is None:
            return obj
        meta = dict(convert.metadata(obj))
        meta["annotations"] = {**(meta.get("annotations") or {}), volcano.JOB_LIFECYCLE: lifecycle}
        return {**obj, "metadata": meta}

    def job_changed(self, uid: str, lifecycle: str | None) -> None:
        if lifecycle is None:
            self.lifecycles.pop(uid, None)
        elif self.lifecycles.get(uid) == lifecycle:
            return
        else:
            self.lifecycles[uid] = lifecycle
        if self.podgroup_mirror is not None:
            for obj in [pg for pg in self.podgroups.values() if self.owner(pg) == uid]:
                self.podgroup_mirror.apply(MODIFIED, obj)


class VolcanoJobMirror:
    """``batch.volcano.sh`` Jobs: only their lifecycle is read (see ``VolcanoJobs``); their pods
    and PodGroup come from Volcano's controller and are watched as such."""

    kind = "Job"
    api_version = "batch.volcano.sh/v1alpha1"

    def __init__(self, jobs: VolcanoJobs) -> None:
        self.jobs = jobs

    def replace(self, objects: Iterable[Mapping[str, Any]]) -> None:
        objects = list(objects)
        uids = {convert.metadata(obj).get("uid") for obj in objects}
        for uid in [uid for uid in self.jobs.lifecycles if uid not in uids]:
            self.jobs.job_changed(uid, None)
        for obj in objects:
            self.apply(ADDED, obj)

    def apply(self, event_type: str, obj: Mapping[str, Any]) -> None:
        uid = convert.metadata(obj).get("uid") or ""
        self.jobs.job_changed(uid, None if event_type == DELETED else volcano.job_lifecycle(dict(obj)))
