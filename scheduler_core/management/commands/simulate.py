"""``manage.py simulate``: replay a trace under several policies and write results.json + plots.

A thin wrapper over ``scheduler_core.simulation``; bad arguments become a CommandError that says
what is wrong (the trace's bad lines, the cluster spec's bad group, an unknown policy).
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.simulation import (
    DEFAULT_POLICIES,
    DEFAULT_QUEUES,
    POLICIES,
    RUNTIME_MODES,
    ClusterSpecError,
    QueueSpecError,
    ReplayOptions,
    RuntimeModeError,
    TopologyModeError,
    TraceError,
    UnknownPolicy,
    check_mode,
    check_runtimes,
    compare,
    get_policies,
    load_cluster,
    load_trace,
    parse_queues,
    write_outputs,
)
from scheduler_core.simulation.forecast_report import format_forecasts
from scheduler_core.simulation.policies import with_overtake_limit


class Command(BaseCommand):
    help = "Replay a job trace in virtual time under several scheduling policies and compare them."

    def add_arguments(self, parser):
        parser.add_argument("--trace", required=True, help="gangsched CSV or a Tiresias trace")
        parser.add_argument(
            "--cluster",
            required=True,
            help="spec like 1000x{cpu=64,memory=512Gi,nvidia.com/gpu=8} ('+' joins groups), "
            "a preset (n32g4) or a node list CSV (Alibaba openb format)",
        )
        parser.add_argument(
            "--policy",
            action="append",
            dest="policies",
            metavar="NAME",
            help=f"repeatable; one of {', '.join(POLICIES)} (default: {', '.join(DEFAULT_POLICIES)})",
        )
        parser.add_argument(
            "--queues",
            default=None,
            metavar="SPEC",
            help="queue tree: leaves PATH=GUARANTEE%%[:weight=W][:max=P%%], comma-separated, shares of "
            "the cluster; jobs get tenants and every policy is measured per queue (default with a "
            f"queue policy: {DEFAULT_QUEUES.replace('%', '%%')})",
        )
        parser.add_argument(
            "--topology",
            default="preferred",
            metavar="MODE",
            help="the constraint gangsched-topology gives a gang that may span nodes: preferred (one "
            "rack, else one block, else anywhere; the default) or required (inside the narrowest "
            "level that can hold it)",
        )
        parser.add_argument(
            "--runtimes",
            default="oracle",
            metavar="MODE",
            help=f"what the engine is told of runtimes: {', '.join(RUNTIME_MODES)} (oracle: the trace's "
            "exact ones, the default; limit: a user's limit, runtime x U[1, 10]; learned: the submitter's "
            "last two runs of the same job, else the limit; see docs/forecasts.md)",
        )
        parser.add_argument(
            "--forecasts",
            action="store_true",
            help="gangsched forecasts each waiting job's start at its submission and hourly, and the "
            "forecasts (and a Slurm-style plan on users' limits) are judged against the starts; see "
            "docs/forecasts.md, How accurate forecasts are",
        )
        parser.add_argument(
            "--forecast-gap",
            type=float,
            default=ReplayOptions.forecast_gap_s,
            metavar="S",
            help="--forecasts: at most one forecast call per S virtual seconds (default 60)",
        )
        parser.add_argument(
            "--arrival-window",
            type=float,
            default=ReplayOptions.arrival_window_s,
            metavar="S",
            help="--forecasts: the forecasts assume the last S seconds of submissions repeat "
            "(default 0: that nothing more is submitted)",
        )
        parser.add_argument("--out", required=True, help="directory for results.json and the PNGs")
        parser.add_argument("--processes", type=int, default=2, help="policies replayed in parallel")
        parser.add_argument("--tick", type=float, default=1.0, help="scheduling cycle interval, virtual s")
        parser.add_argument(
            "--queue-window", type=int, default=ReplayOptions.queue_window, help="pending jobs a cycle sees"
        )
        parser.add_argument(
            "--overtake-limit",
            type=float,
            default=None,
            metavar="S",
            help="gangsched's queue order: least work first, never passed by a job submitted more "
            "than S seconds later (default: GANGSCHED_OVERTAKE_LIMIT_S's default, 3600; 0: FIFO)",
        )
        parser.add_argument(
            "--time-cap",
            type=float,
            default=ReplayOptions.time_cap,
            help="virtual seconds after the last submission at which the replay stops",
        )

    def handle(self, *args, **options):
        if options["tick"] <= 0 or options["queue_window"] < 1 or options["time_cap"] <= 0:
            raise CommandError("--tick and --time-cap must be positive and --queue-window at least 1")
        if options["forecast_gap"] < 0 or options["arrival_window"] < 0:
            raise CommandError("--forecast-gap and --arrival-window must not be negative")
        try:
            trace = load_trace(options["trace"])
            cluster = load_cluster(options["cluster"])
            policies = get_policies(options["policies"] or list(DEFAULT_POLICIES))
            queues = parse_queues(options["queues"]) if options["queues"] is not None else None
            check_mode(options["topology"])
            check_runtimes(options["runtimes"])
            if options["overtake_limit"] is not None:
                policies = with_overtake_limit(policies, options["overtake_limit"])
        except (
            TraceError,
            ClusterSpecError,
            UnknownPolicy,
            QueueSpecError,
            TopologyModeError,
            RuntimeModeError,
        ) as error:
            raise CommandError(str(error)) from error
        replay_options = ReplayOptions(
            tick=options["tick"],
            queue_window=options["queue_window"],
            time_cap=options["time_cap"],
            queues=queues,
            topology=options["topology"],
            runtimes=options["runtimes"],
            forecasts=options["forecasts"],
            forecast_gap_s=options["forecast_gap"],
            arrival_window_s=options["arrival_window"],
        )
        try:
            comparison = compare(trace, cluster, policies, replay_options, processes=options["processes"])
        except TraceError as error:  # a job naming a queue the tree does not have
            raise CommandError(str(error)) from error
        results, plots = write_outputs(comparison, Path(options["out"]))
        self.stdout.write(format_table(results))
        for name, figures in results["policies"].items():
            if "forecasts" in figures:
                self.stdout.write(format_forecasts(name, figures["forecasts"]))
        self.stdout.write(f"wrote {Path(options['out']) / 'results.json'} and {len(plots)} plots")


def format_table(results: dict) -> str:
    """The policies side by side, as docs/trace-replay.md shows them."""
    rows = [
        ("finished", lambda m: f"{m['jobs_finished']}/{m['jobs_total']}"),
        ("avg wait (s)", lambda m: _num(m["avg_wait_s"])),
        ("p95 wait (s)", lambda m: _num(m["p95_wait_s"])),
        ("avg JCT (s)", lambda m: _num(m["avg_jct_s"])),
        ("p95 JCT (s)", lambda m: _num(m["p95_jct_s"])),
        ("makespan (s)", lambda m: _num(m["makespan_s"])),
        ("GPU util", lambda m: f"{m['utilization'].get('nvidia.com/gpu', 0):.1%}"),
        ("GPU waste (h)", lambda m: _num(m["waste_resource_hours"].get("nvidia.com/gpu", 0))),
        ("deadlocked", lambda m: str(m["deadlocked_jobs"])),
        ("head late / started as head", _head),
        ("scheduler (s)", lambda m: _num(m["scheduler_seconds"])),
    ]
    names = list(results["policies"])
    first = results["policies"][names[0]]
    if "queues" in first:
        rows += [
            ("Jain index (time avg)", lambda m: _num(m.get("jain_index"), 3)),
            ("reclaim evictions", lambda m: str(m.get("reclaim_evictions", "-"))),
            ("reclaim lost GPU-h", lambda m: _num(m.get("reclaim_lost_gpu_hours"), 2)),
            ("jobs evicted again", lambda m: str(m.get("reclaim_evicted_again", "-"))),
        ]
        for queue in first["queues"]:
            rows += [
                (f"{queue}: avg / p95 wait", lambda m, q=queue: _wait(m, q)),
                (f"{queue}: below guarantee", lambda m, q=queue: _below(m, q)),
            ]
    if "topology" in first:
        rows += topology_rows(list(first["topology"]["eligible"].get("by_size", {})))
    lines = ["| metric | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, cell in rows:
        lines.append(f"| {label} | " + " | ".join(cell(results["policies"][n]) for n in names) + " |")
    return "\n".join(lines)


def topology_rows(sizes: list[str]) -> list:
    """Topology: where multi-node and eligible gangs landed (all, and eligible ones per size), and
    what they waited."""
    groups = [("multi-node gangs", ("multi_node",)), ("eligible gangs", ("eligible",))]
    groups += [(f"eligible, size {size}", ("eligible", "by_size", size)) for size in sizes]
    rows = []
    for title, path in groups:
        rows.append((f"{title}: started", lambda m, p=path: str(_figures(m, p).get("gangs", "-"))))
        for level in ("rack", "block"):
            rows.append(
                (f"{title}: in one {level}; avg {level}s", lambda m, p=path, v=level: _spread(m, p, v))
            )
        rows.append((f"{title}: avg / p95 wait", lambda m, p=path: _group_wait(_figures(m, p))))
    return rows


def _figures(metrics: dict, path: tuple[str, ...]) -> dict:
    figures = metrics.get("topology", {})
    for key in path:
        figures = figures.get(key, {})
    return figures


def _spread(metrics: dict, path: tuple[str, ...], level: str) -> str:
    figures = _figures(metrics, path).get("levels", {}).get(level, {})
    if figures.get("one_domain_share") is None:
        return "-"
    return f"{figures['one_domain_share']:.0%}; {figures['avg_domains']:.2f}"


def _group_wait(figures: dict) -> str:
    return f"{_num(figures.get('avg_wait_s'))} / {_num(figures.get('p95_wait_s'))}"


def _head(metrics: dict) -> str:
    figures = metrics.get("head_guarantee")
    if figures is None:
        return "-"
    return f"{figures['late']} / {figures['started_as_head']} (max {_num(figures['late_max_s'])} s)"


def _num(value, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _wait(metrics: dict, queue: str) -> str:
    figures = metrics.get("queues", {}).get(queue)
    return "-" if figures is None else f"{_num(figures['avg_wait_s'])} / {_num(figures['p95_wait_s'])}"


def _below(metrics: dict, queue: str) -> str:
    figures = metrics.get("queues", {}).get(queue)
    if figures is None:
        return "-"
    return f"{_num(figures['below_guarantee_s'], 0)} s ({figures['below_guarantee_share']:.0%})"
