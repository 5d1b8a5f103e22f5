"""``manage.py node_usage [--repair]``: compare the per-node and per-queue usage the database keeps
with a fresh sum over the members, and rebuild them (and the gang events per minute) with
``--repair``.

The member table's triggers keep them right (migrations 0017, 0019); drift means something went
around them (a restored dump, a disabled trigger, a hand edit of ``scheduler_core_nodeusage`` or
``scheduler_core_queueusage``). Exit status 1 when drift is found and not repaired, so a cron or a
check can alert on it."""

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.engine.quantity import format_quantity
from scheduler_core.reads.node_usage import usage_compact, usage_drift, usage_repair
from scheduler_core.reads.tallies import POD_COUNT, queue_drift, tallies_repair


def _said(amounts) -> str:
    return ", ".join(f"{r} {format_quantity(r, v)}" for r, v in sorted(amounts.items()) if v) or "nothing"


def _queue_said(amounts) -> str:
    amounts = dict(amounts)
    pods = amounts.pop(POD_COUNT, 0)
    return f"{pods} pod{'' if pods == 1 else 's'}, {_said(amounts)}"


class Command(BaseCommand):
    help = "Check the stored per-node and per-queue usage against the members; --repair rebuilds them."

    def add_arguments(self, parser):
        parser.add_argument("--repair", action="store_true", help="rebuild the usage from the members")

    def handle(self, *args, **options):
        usage_compact()
        drift, queues = usage_drift(), queue_drift()
        for node, (stored, truth) in drift.items():
            self.stdout.write(f"node {node}: stored {_said(stored)}; members {_said(truth)}")
        for (namespace, queue, bound), (stored, truth) in queues.items():
            which = f"queue {queue} (namespace {namespace}, {'bound' if bound else 'waiting'})"
            self.stdout.write(f"{which}: stored {_queue_said(stored)}; members {_queue_said(truth)}")
        if not drift and not queues:
            self.stdout.write("node and queue usage match the members")
            return
        if not options["repair"]:
            raise CommandError(
                f"{len(drift)} node(s) and {len(queues)} queue charge(s) drifted; "
                "run with --repair to rebuild from the members"
            )
        rows = usage_repair() + tallies_repair()
        self.stdout.write(
            f"usage rebuilt from the members: {rows} rows, {len(drift)} node(s) and "
            f"{len(queues)} queue charge(s) repaired"
        )
