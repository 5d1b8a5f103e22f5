"""JobSet (``jobset.x-k8s.io/v1alpha2``): the child Jobs' pods the JobSet controller makes, and
the one workload Kueue admits for the whole JobSet.

The JobSet controller (``pkg/controllers/jobset_controller.go``) makes, for each
``spec.replicatedJobs[]`` entry, ``replicas`` Jobs (default 1) named ``<jobset>-<replicatedJob>-<i>``
(``placement.GenJobName``); its webhook makes them Indexed. Each Job makes
``min(parallelism, completions)`` pods (parallelism default 1), upstream named
``<job>-<index>-<random 5>``: gangsched makes the 5 characters deterministic, the first of a SHA-1
of ``<namespace>/<job>-<index>`` in Kubernetes' suffix alphabet, so applying again finds the
same pods. Each pod carries the template's labels and, as ``labelAndAnnotateObject`` sets them
(labels and annotations alike): ``jobset.sigs.k8s.io/jobset-name``, ``replicatedjob-name``,
``replicatedjob-replicas``, ``global-replicas``, ``job-index``, ``job-global-index``, ``job-key``
(SHA-1 of ``<namespace>/<job>``), ``restart-attempt`` ``0``, ``group-name`` (default
``default``), ``group-replicas``, ``job-group-index``, ``coordinator`` (with
``spec.coordinator``); and the Job controller's ``batch.kubernetes.io/job-name`` and
``job-completion-index``.

The gang is the workload Kueue makes for a JobSet (``pkg/controller/jobs/jobset``: a pod set per
replicatedJob of ``replicas x min(parallelism, completions)`` pods), admitted whole: one gang
named as the JobSet, ``source`` ``jobset``, min_member = total_number = all its pods; queue the
LocalQueue of the JobSet's ``kueue.x-k8s.io/queue-name`` label (else ``default``); priority the
value of the WorkloadPriorityClass its ``kueue.x-k8s.io/priority-class`` label names, else the
first template naming one (``priority`` / ``priorityClassName``), as Kueue's ``ExtractPriority``
orders them; no timeout; RestartFailedOnly (a
child Job replaces a failed pod, the workload stays admitted). A template's Kueue / KAI topology
annotations constrain the whole gang (``topology_keys.py``).

Exclusive placement (annotation ``alpha.jobset.sigs.k8s.io/exclusive-topology: <node label>`` on
the JobSet, or on a replicatedJob's Job template) puts each child Job in a domain of its own
upstream: the pod webhook (``pkg/webhooks/pod_webhook.go``, ``setExclusiveAffinities``) gives its
pods an affinity to their Job's pods and an anti-affinity to any other Job's at that label. Here
each child Job is a gang of its own, named as the Job, in the gang group ``<namespace>/<jobset>``
(which binds whole, as Kueue admits the JobSet), each exclusive Job's gang required in one domain
of that level and exclusive there: no other exclusive gang (another Job of this JobSet or of any
other, a LeaderWorkerSet group) shares its domain (``engine/topology_exclusive.py``). With
``alpha.jobset.sigs.k8s.io/node-selector`` too (the node-selector strategy) the pods get
upstream's nodeSelector ``alpha.jobset.sigs.k8s.io/namespaced-job: <namespace>_<job>`` and the
toleration of ``alpha.jobset.sigs.k8s.io/no-schedule`` instead, nodes being labelled beforehand.

Refused, naming the key: ``spec.suspend: true`` (gangsched holds no suspended JobSet), a
WorkloadPriorityClass label naming an unknown class, a template naming another gang, replicatedJob
names given twice, a child Job or pod name that is not a DNS-1035 label (the webhook's checks).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from scheduler_core.models import RestartPolicy

from . import validate as v
from .deadlines import pod_deadline, tighten
from .documents import Manifest
from .kueue import job_queue, workload_priority
from .mpijob import template_gang_refuse
from .spec import GangRef, GangSpec, Loaded, PodSpec
from .topologies import label_key
from .topology_keys import TopologyAsk, ask_apply
from .workloads import PodReader, object_meta, owner_ask, pod_spec, priority_of

API_VERSION = "jobset.x-k8s.io/v1alpha2"
GROUP = "jobset.x-k8s.io"
SOURCE = "jobset"
PREFIX = "jobset.sigs.k8s.io/"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR = "alpha.jobset.sigs.k8s.io/node-selector"
NAMESPACED_JOB = "alpha.jobset.sigs.k8s.io/namespaced-job"
NO_SCHEDULE = "alpha.jobset.sigs.k8s.io/no-schedule"
JOB_NAME, COMPLETION_INDEX = "batch.kubernetes.io/job-name", "batch.kubernetes.io/job-completion-index"
#: Kubernetes' generated-name alphabet (``k8s.io/apimachinery/pkg/util/rand``): no vowels, no 0/1/3.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def load(manifest: Manifest, readers: Sequence[PodReader]) -> Loaded:
    namespace, name, metadata = object_meta(manifest)
    meta_field, spec_field = v.join(manifest.path, "metadata"), v.join(manifest.path, "spec")
    spec = v.mapping(manifest.obj.get("spec"), spec_field, optional=False)
    if spec.get("suspend") is True:
        raise v.DeclarationError(
            v.join(spec_field, "suspend"), "gangsched holds no suspended JobSet: apply it when it is to run"
        )
    annotations = v.string_map(metadata.get("annotations"), v.join(meta_field, "annotations"))
    queue = job_queue(metadata, meta_field)
    jobs = _jobs(namespace, name, spec, spec_field, annotations, v.join(meta_field, "annotations"))
    _coordinator_check(spec, spec_field, jobs)
    per_job = any(job["exclusive"] is not None for job in jobs)
    whole = GangRef(namespace, name, SOURCE, manifest.name_field)
    if queue is not None:
        whole.queue, whole.queue_field = queue
    pods, gangs, priority = [], [], None
    for job in jobs:
        ref = GangRef(
            namespace, job["name"], SOURCE, job["field"], queue=whole.queue, queue_field=whole.queue_field
        )
        job_pods = _job_pods(manifest, namespace, job, ref if per_job else whole, readers, spec)
        pods += job_pods
        if len(pods) > v.limit("GANGSCHED_MAX_GANG_MEMBERS", v.MAX_GANG_MEMBERS):
            raise v.DeclarationError(v.join(spec_field, "replicatedJobs"), "too many pods in one JobSet")
        if priority is None:
            priority = priority_of(job["pod"], v.join(job["template_field"], "spec"))
        if per_job and job_pods:  # a Job of no pod is no gang
            gang = _gang(namespace, job["name"], len(job_pods), manifest, job["field"], queue)
            ask_apply(gang, job["exclusive"])
            gangs.append(gang)
    if not pods:
        raise v.DeclarationError(v.join(spec_field, "replicatedJobs"), "a JobSet needs at least one pod")
    priority = workload_priority(metadata, meta_field, priority)
    if per_job:
        if len(gangs) > v.MAX_GROUP_GANGS:
            raise v.DeclarationError(
                v.join(spec_field, "replicatedJobs"),
                f"{len(gangs)} child Jobs placed exclusively: at most {v.MAX_GROUP_GANGS} gangs in a group",
            )
        keys = sorted(gang.key for gang in gangs)
        for gang in gangs:
            gang.group, gang.group_key, gang.priority = keys, f"{namespace}/{name}", priority
    else:
        gang = _gang(namespace, name, len(pods), manifest, manifest.name_field, queue)
        gang.priority = priority
        gangs.append(gang)
    owner_ask(manifest, pods)  # Kueue's / KAI's topology annotations on the JobSet itself
    return Loaded(object_name=f"jobset.{GROUP}/{name}", gangs=gangs, pods=pods)


def _gang(namespace, name, count, manifest, field, queue) -> GangSpec:
    return GangSpec(
        namespace=namespace,
        name=name,
        min_member=count,
        total_number=count,
        wait_seconds=None,
        queue=queue[0] if queue else "default",
        queue_field=queue[1] if queue else "",
        restart_policy=RestartPolicy.RESTART_FAILED_ONLY.value,
        source_format=SOURCE,
        declaration=manifest.obj,
        field=field,
    )


def _jobs(namespace, name, spec, spec_field, annotations, annotations_field) -> list[dict[str, Any]]:
    """Each child Job: its name, index, pod count, template and exclusive-placement ask."""
    field = v.join(spec_field, "replicatedJobs")
    entries = v.sequence(spec.get("replicatedJobs"), field)
    if not entries:
        raise v.DeclarationError(field, "a JobSet needs at least one replicatedJob")
    shared = _exclusive(annotations, annotations_field)
    read, seen = [], set()
    for index, entry in enumerate(entries):
        where = v.join(field, index)
        entry = v.mapping(entry, where, optional=False)
        rjob = v.dns_label(entry.get("name"), v.join(where, "name"))
        if rjob in seen:
            raise v.DeclarationError(v.join(where, "name"), f"replicatedJob {rjob!r} is declared twice")
        seen.add(rjob)
        replicas = v.member_count(entry.get("replicas", 1), v.join(where, "replicas"), minimum=0)
        group = entry.get("groupName", "default")
        _dns_1035(group, v.join(where, "groupName"), "group name")
        job_template_field = v.join(where, "template")
        job_template = v.mapping(entry.get("template"), job_template_field, optional=False)
        job_meta_field = v.join(job_template_field, "metadata")
        job_meta = v.mapping(job_template.get("metadata"), job_meta_field)
        job_annotations = v.string_map(job_meta.get("annotations"), v.join(job_meta_field, "annotations"))
        exclusive = _exclusive(job_annotations, v.join(job_meta_field, "annotations")) or shared
        job_spec_field = v.join(job_template_field, "spec")
        job_spec = v.mapping(job_template.get("spec"), job_spec_field, optional=False)
        count = v.member_count(
            job_spec.get("parallelism", 1), v.join(job_spec_field, "parallelism"), minimum=0
        )
        if job_spec.get("completions") is not None:
            completions = v.member_count(
                job_spec["completions"], v.join(job_spec_field, "completions"), minimum=0
            )
            count = min(count, completions)
        template_field = v.join(job_spec_field, "template")
        template = v.mapping(job_spec.get("template"), template_field, optional=False)
        pod = v.mapping(template.get("spec"), v.join(template_field, "spec"), optional=False)
        _dns_1035(f"{name}-{rjob}-{max(replicas, 1) - 1}", v.join(where, "name"), "child Job name")
        _dns_1035(
            f"{name}-{rjob}-{max(replicas, 1) - 1}-{max(count, 1) - 1}-abcde",
            v.join(where, "name"),
            "pod name",
        )
        strategy = NODE_SELECTOR in job_annotations or (exclusive is shared and NODE_SELECTOR in annotations)
        for job_index in range(replicas):
            read.append(
                {
                    "name": f"{name}-{rjob}-{job_index}",
                    "jobset": name,
                    "rjob": rjob,
                    "replicas": replicas,
                    "index": job_index,
                    "group": group,
                    "count": count,
                    "field": where,
                    "template": template,
                    "template_field": template_field,
                    "pod": pod,
                    "deadline": pod_deadline(job_spec, job_spec_field),
                    "exclusive": None if exclusive is None or strategy else exclusive,
                    "exclusive_key": None if exclusive is None else exclusive.required,
                    "node_selector": exclusive is not None and strategy,
                }
            )
    return read


def _coordinator_check(spec: dict[str, Any], spec_field: str, jobs: list[dict[str, Any]]) -> None:
    """The webhook's ``validateCoordinator``: the coordinator pod is one the JobSet makes."""
    field = v.join(spec_field, "coordinator")
    coordinator = v.mapping(spec.get("coordinator"), field)
    if not coordinator:
        return
    rjob = coordinator.get("replicatedJob")
    job_index = v.integer(
        coordinator.get("jobIndex", 0), v.join(field, "jobIndex"), minimum=0, maximum=2**31 - 1
    )
    pod_index = v.integer(
        coordinator.get("podIndex", 0), v.join(field, "podIndex"), minimum=0, maximum=2**31 - 1
    )
    found = [job for job in jobs if job["rjob"] == rjob and job["index"] == job_index]
    if not found or pod_index >= found[0]["count"]:
        raise v.DeclarationError(
            field, f"no pod {pod_index} of job {job_index} of replicatedJob {v.shown(rjob)} in this JobSet"
        )


def _exclusive(annotations: dict[str, str], field: str) -> TopologyAsk | None:
    if EXCLUSIVE not in annotations:
        return None
    where = v.join(field, EXCLUSIVE)
    return TopologyAsk(required=label_key(annotations[EXCLUSIVE], where), field=where, exclusive=True)


def _dns_1035(value: Any, field: str, what: str) -> None:
    if not isinstance(value, str) or len(value) > 63 or not _DNS_1035.fullmatch(value):
        raise v.DeclarationError(
            field,
            f"the {what} {v.shown(value)} would not be a DNS-1035 label (at most 63 lowercase letters, "
            "digits and '-', starting with a letter): shorten the names",
        )


def _job_pods(manifest, namespace, job, ref, readers, spec) -> list[PodSpec]:
    template_field = job["template_field"]
    metadata = v.mapping(job["template"].get("metadata"), v.join(template_field, "metadata"))
    template_gang_refuse(metadata, job["pod"], template_field, namespace, ref.key, readers, "JobSet")
    labels = v.string_map(metadata.get("labels"), v.join(template_field, "metadata", "labels"))
    annotations = v.string_map(metadata.get("annotations"), v.join(template_field, "metadata", "annotations"))
    added = _jobset_keys(manifest, namespace, job, spec)
    extra = {EXCLUSIVE: job["exclusive_key"]} if job["exclusive_key"] else {}
    pod = dict(job["pod"])
    if job["node_selector"]:
        pod["nodeSelector"] = {
            **(pod.get("nodeSelector") or {}),
            NAMESPACED_JOB: f"{namespace}_{job['name']}",
        }
        toleration = {"key": NO_SCHEDULE, "operator": "Exists", "effect": "NoSchedule"}
        pod["tolerations"] = [*(pod.get("tolerations") or []), toleration]
    pods = []
    for index in range(job["count"]):
        name = f"{job['name']}-{index}-{_suffix(namespace, job['name'], index)}"
        batch = {JOB_NAME: job["name"], COMPLETION_INDEX: str(index)}
        pods.append(
            pod_spec(
                namespace=namespace,
                name=name,
                metadata={
                    **metadata,
                    "labels": {**labels, **added, **batch},
                    "annotations": {**annotations, **added, **extra, **batch},
                },
                spec=pod,
                field=template_field,
                readers=readers,
                name_field=v.join(manifest.path, "metadata", "name"),
                gang=ref,
            )
        )
    for pod_read in pods:
        tighten(pod_read, job["deadline"])  # the child Job's own activeDeadlineSeconds
    return pods


def _jobset_keys(manifest, namespace, job, spec) -> dict[str, str]:
    """``labelAndAnnotateObject``'s keys for one child Job (no UID in the simulated cluster)."""
    entries = spec["replicatedJobs"]
    name = job["jobset"]
    before = sum(e.get("replicas", 1) for e in entries[: _position(entries, job["rjob"])])
    group = [e for e in entries if e.get("groupName", "default") == job["group"]]
    group_before = sum(e.get("replicas", 1) for e in group[: _position(group, job["rjob"])])
    keys = {
        "jobset-name": name,
        "replicatedjob-name": job["rjob"],
        "restart-attempt": "0",
        "replicatedjob-replicas": str(job["replicas"]),
        "global-replicas": str(sum(e.get("replicas", 1) for e in entries)),
        "job-index": str(job["index"]),
        "job-key": hashlib.sha1(f"{namespace}/{job['name']}".encode()).hexdigest(),
        "job-global-index": str(before + job["index"]),
        "group-name": job["group"],
        "group-replicas": str(sum(e.get("replicas", 1) for e in group)),
        "job-group-index": str(group_before + job["index"]),
    }
    coordinator = spec.get("coordinator")
    if isinstance(coordinator, dict):
        network_field = v.join(manifest.path, "spec", "network")
        network = v.mapping(spec.get("network"), network_field)
        subdomain = network.get("subdomain") or name
        v.dns_label(subdomain, v.join(network_field, "subdomain"))
        keys["coordinator"] = (
            f"{name}-{coordinator.get('replicatedJob')}-{coordinator.get('jobIndex', 0)}"
            f"-{coordinator.get('podIndex', 0)}.{subdomain}"
        )
    return {PREFIX + key: value for key, value in keys.items()}


def _position(entries: list, rjob: str) -> int:
    return next(i for i, e in enumerate(entries) if e.get("name") == rjob)


def _suffix(namespace: str, job: str, index: int) -> str:
    """Five characters standing for the Job controller's random ones, the same on every apply."""
    digest = hashlib.sha1(f"{namespace}/{job}-{index}".encode()).digest()
    return "".join(_ALPHABET[byte % len(_ALPHABET)] for byte in digest[:5])
