"""/simulations/: start a trace replay (operators), watch its progress, compare policies side by side."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from dashboard.api.simulations import START_SIMULATION
from dashboard.models import SimulationRun, SimulationRuntimes
from dashboard.simulation_start import simulation_run_create
from dashboard.simulations import (
    MAX_OVERTAKE_LIMIT_S,
    MAX_UPLOAD_BYTES,
    POLICY_NAMES,
    cluster_check,
    plot_dir,
    shared_traces,
    trace_check,
)
from scheduler_core.simulation import DEFAULT_POLICIES, POLICIES
from scheduler_core.simulation.plots import PLOTS

DEFAULT_CLUSTER = "n32g4"
RUNS_SHOWN = 50
#: The rows of the side-by-side table: label, results key, how to show the value.
METRICS = (
    ("Jobs finished", "jobs_finished", "count"),
    ("Deadlocked jobs", "deadlocked_jobs", "count"),
    ("Avg wait (s)", "avg_wait_s", "seconds"),
    ("p95 wait (s)", "p95_wait_s", "seconds"),
    ("Avg JCT (s)", "avg_jct_s", "seconds"),
    ("p95 JCT (s)", "p95_jct_s", "seconds"),
    ("Makespan (s)", "makespan_s", "seconds"),
    ("Scheduler time (s)", "scheduler_seconds", "seconds"),
    ("Queue overtake limit (s)", "overtake_limit_s", "seconds"),
)


class SimulationForm(forms.Form):
    trace = forms.ChoiceField(required=False, label="Shared trace")
    trace_file = forms.FileField(required=False, label="or upload a CSV")
    cluster = forms.CharField(
        initial=DEFAULT_CLUSTER,
        max_length=1000,
        help_text="e.g. 1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8}, n32g4, or a node list name",
    )
    policies = forms.MultipleChoiceField(
        choices=[(name, name) for name in POLICY_NAMES],
        initial=list(DEFAULT_POLICIES),
        widget=forms.CheckboxSelectMultiple,
    )
    overtake_limit_s = forms.FloatField(
        required=False,
        min_value=0.0,
        max_value=MAX_OVERTAKE_LIMIT_S,
        label="gangsched overtake limit (s)",
        help_text="gangsched's queue: least work first, never passed by a job submitted more than this "
        "many seconds later; empty: 3600 (the default); 0: FIFO",
    )
    runtimes = forms.ChoiceField(
        choices=SimulationRuntimes.choices,
        initial=SimulationRuntimes.ORACLE,
        required=False,
        widget=forms.RadioSelect,
        label="Runtimes the scheduler is told",
        help_text="oracle: the trace's exact ones; limit: a user's limit (runtime x U[1, 10]); learned: "
        "the submitter's last two runs of the same job, else the limit. The trace's runtimes always "
        "decide when a job ends.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["trace"].choices = [("", "—")] + [(name, name) for name in shared_traces()]

    def clean_cluster(self) -> str:
        try:
            cluster_check(self.cleaned_data["cluster"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error
        return self.cleaned_data["cluster"]

    def clean_runtimes(self) -> str:
        return self.cleaned_data["runtimes"] or SimulationRuntimes.ORACLE

    def clean(self) -> dict:
        data = super().clean()
        upload = data.get("trace_file")
        text = None
        if upload is not None:
            if upload.size > MAX_UPLOAD_BYTES:
                self.add_error("trace_file", f"larger than {MAX_UPLOAD_BYTES // 2**20} MiB")
                return data
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("trace_file", "not a UTF-8 text file")
                return data
        try:
            trace_check(
                shared=data.get("trace") or None, upload_name=getattr(upload, "name", None), upload_text=text
            )
        except ValueError as error:
            self.add_error("trace_file" if upload is not None else "trace", str(error))
        data["trace_text"] = text
        return data


@require_http_methods(["GET", "POST"])
@login_required
def simulation_list(request):
    can_start = request.user.has_perm(START_SIMULATION)
    form = SimulationForm()
    if request.method == "POST":
        if not can_start:
            raise PermissionDenied("only operators may start simulations")
        form = SimulationForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            upload = data.get("trace_file")
            run = simulation_run_create(
                user=request.user,
                shared=data.get("trace") or None,
                upload_name=getattr(upload, "name", None),
                upload_text=data.get("trace_text"),
                cluster=data["cluster"],
                policies=data["policies"],
                overtake_limit_s=data.get("overtake_limit_s"),
                runtimes=data["runtimes"],
            )
            return redirect("dashboard:simulation", run.pk)
    runs = list(
        SimulationRun.objects.select_related("requested_by").defer("trace_text", "results")[:RUNS_SHOWN]
    )
    status = 400 if form.is_bound else 200
    return render(
        request,
        "dashboard/simulations.html",
        {"runs": runs, "form": form, "can_start": can_start, "active": any(not run.done for run in runs)},
        status=status,
    )


@require_GET
@login_required
def simulation_detail(request, pk: int):
    run = get_object_or_404(SimulationRun.objects.select_related("requested_by"), pk=pk)
    policies = list((run.results or {}).get("policies", {}).items())
    rows = [
        (label, [_show(metrics.get(key), kind) for _name, metrics in policies])
        for label, key, kind in METRICS
    ]
    rows.extend(_runtime_rows(policies))  # beside the waits they explain
    sizes = list(dict.fromkeys(size for _name, m in policies for size in m.get("wait_by_size", {})))
    for size in sizes:  # the big gangs' wait is what an average over every job hides
        for label, key in (("Avg", "avg_wait_s"), ("p95", "p95_wait_s")):
            rows.append(
                (
                    f"{label} wait, jobs of {size} (s)",
                    [
                        _show(m.get("wait_by_size", {}).get(size, {}).get(key), "seconds")
                        for _n, m in policies
                    ],
                )
            )
    resources = sorted({r for _name, metrics in policies for r in metrics.get("utilization", {})})
    for resource in resources:
        rows.append(
            (f"Utilisation {resource}", [_share(m["utilization"].get(resource)) for _n, m in policies])
        )
        rows.append(
            (
                f"Waste {resource} (h)",
                [_show(m["waste_resource_hours"].get(resource), "seconds") for _n, m in policies],
            )
        )
    rows.extend(_queue_rows(policies))
    rows.extend(_topology_rows(policies))
    return render(
        request,
        "dashboard/simulation_detail.html",
        {
            "run": run,
            "names": [name for name, _metrics in policies],
            "rows": rows,
            "plots": [name for name in PLOTS if name in run.plots and name != "comparison.png"],
            "descriptions": [
                (name, POLICIES[name].models, POLICIES[name].simplifies)
                for name in run.policies
                if name in POLICIES
            ],
        },
    )


@require_GET
@login_required
def simulation_plot(request, pk: int, name: str):
    run = get_object_or_404(SimulationRun, pk=pk)
    if name not in PLOTS or name not in run.plots:
        raise Http404("no such plot")
    path = plot_dir(run) / name
    if not path.is_file():
        raise Http404("the plot file is gone")
    return FileResponse(path.open("rb"), content_type="image/png")


def _runtime_rows(policies: list[tuple[str, dict]]) -> list[tuple[str, list[str]]]:
    """Without the oracle: what the estimates were worth, and whether gangsched's head kept its
    promised start (head_book.py) when backfilling planned with them."""
    rows = []
    figures = [m.get("runtimes") or {} for _n, m in policies]
    if any(f.get("mode", "oracle") != "oracle" for f in figures):
        rows += [
            ("Starts on a learned estimate", [_source_share(f, "learned") for f in figures]),
            ("Starts on the limit", [_source_share(f, "limit") for f in figures]),
            (
                "Estimate / runtime, median",
                [_show(f.get("estimate_over_runtime_median"), "ratio") for f in figures],
            ),
            ("Jobs underestimated", [_share(f.get("underestimated_share")) for f in figures]),
        ]
    heads = [m.get("head_guarantee") for _n, m in policies]
    if any(heads):
        rows.append(("Heads late / started as head", [_late_heads(h) for h in heads]))
    return rows


def _source_share(figures: dict, source: str) -> str:
    starts = figures.get("starts_by_source") or {}
    total = sum(starts.values())
    return _share(starts.get(source, 0) / total) if total else "—"


def _late_heads(head: dict | None) -> str:
    if not head:
        return "—"
    return f"{head['late']:,} / {head['started_as_head']:,}"


def _queue_rows(policies: list[tuple[str, dict]]) -> list[tuple[str, list[str]]]:
    """With queues: fairness, reclaim, and each queue's wait and time below guarantee."""
    if not any("queues" in m for _n, m in policies):
        return []
    rows = [
        ("Fairness (Jain's index, time avg)", [_show(m.get("jain_index"), "ratio") for _n, m in policies]),
        ("Reclaim evictions", [_show(m.get("reclaim_evictions"), "count") for _n, m in policies]),
        (
            "GPU-hours thrown away by reclaim",
            [_show(m.get("reclaim_lost_gpu_hours"), "h") for _n, m in policies],
        ),
    ]
    names = list(dict.fromkeys(q for _n, m in policies for q in m.get("queues", {})))
    for queue in names:
        figures = [m.get("queues", {}).get(queue, {}) for _n, m in policies]
        rows.append(
            (f"Queue {queue}: avg wait (s)", [_show(f.get("avg_wait_s"), "seconds") for f in figures])
        )
        rows.append(
            (f"Queue {queue}: p95 wait (s)", [_show(f.get("p95_wait_s"), "seconds") for f in figures])
        )
        rows.append(
            (
                f"Queue {queue}: below guarantee with demand",
                [_share(f.get("below_guarantee_share")) for f in figures],
            )
        )
    return rows


def _topology_rows(policies: list[tuple[str, dict]]) -> list[tuple[str, list[str]]]:
    """With racks: where gangs that may span nodes landed, and what they waited."""
    if not any("topology" in m for _n, m in policies):
        return []
    rows = []
    for group, title in (("eligible", "Gangs that may span nodes"), ("multi_node", "Multi-node gangs")):
        figures = [m.get("topology", {}).get(group, {}) for _n, m in policies]
        rows.append((f"{title}: started", [_show(f.get("gangs"), "count") for f in figures]))
        for level in ("rack", "block"):
            spans = [f.get("levels", {}).get(level, {}) for f in figures]
            rows.append((f"{title}: inside one {level}", [_share(x.get("one_domain_share")) for x in spans]))
            rows.append(
                (f"{title}: avg {level}s spanned", [_show(x.get("avg_domains"), "ratio") for x in spans])
            )
        rows.append((f"{title}: avg wait (s)", [_show(f.get("avg_wait_s"), "seconds") for f in figures]))
        rows.append((f"{title}: p95 wait (s)", [_show(f.get("p95_wait_s"), "seconds") for f in figures]))
    return rows


def _show(value, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "ratio":
        return f"{value:.3f}"
    if kind == "h":
        return f"{value:,.2f}"
    return f"{value:,}" if kind == "count" else f"{value:,.1f}"


def _share(value) -> str:
    return "—" if value is None else f"{value:.1%}"
