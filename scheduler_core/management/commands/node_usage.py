"""``manage.py node_usage [--repair]``: compare the per-node usage the database keeps with a fresh
sum over the members, and rebuild it from the members with ``--repair``.

The member table's triggers keep it right (migration 0017); drift means something went around
them (a restored dump, a disabled trigger, a hand edit of ``scheduler_core_nodeusage``). Exit
status 1 when drift is found and not repaired, so a cron or a check can alert on it."""

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.engine.quantity import format_quantity
from scheduler_core.node_usage import usage_compact, usage_drift, usage_repair


def _said(amounts) -> str:
    return ", ".join(f"{r} {format_quantity(r, v)}" for r, v in sorted(amounts.items()) if v) or "nothing"


class Command(BaseCommand):
    help = "Check the stored per-node usage against the members; --repair rebuilds it from them."

    def add_arguments(self, parser):
        parser.add_argument("--repair", action="store_true", help="rebuild the usage from the members")

    def handle(self, *args, **options):
        usage_compact()
        drift = usage_drift()
        for node, (stored, truth) in drift.items():
            self.stdout.write(f"node {node}: stored {_said(stored)}; members {_said(truth)}")
        if not drift:
            self.stdout.write("node usage matches the members")
            return
        if not options["repair"]:
            raise CommandError(f"{len(drift)} node(s) drifted; run with --repair to rebuild from the members")
        rows = usage_repair()
        self.stdout.write(f"node usage rebuilt from the members: {rows} rows, {len(drift)} node(s) repaired")
