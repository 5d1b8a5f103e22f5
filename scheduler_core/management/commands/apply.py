"""Load manifests into the cluster, as ``kubectl apply -f`` does.

    manage.py apply -f trainer.yaml [-f more/ ...] [-f -] [--dry-run=none|server]

A directory loads its ``*.yaml``, ``*.yml`` and ``*.json`` files in name order; ``-`` reads
standard input. Each file is applied in its own transaction: a refused file writes nothing, the
command stops there and exits non-zero, naming the file, the field and the reason.

``--dry-run=server`` applies every file the same way, each seeing the files before it, inside
one transaction rolled back at the end (scheduler_core/db/dry_run.py): every check runs, the
lines say what would be created with kubectl's ``(server dry run)`` after each, and nothing is
written or triggered. ``client`` is refused: kubectl's client-side dry run stops before the
server, and this command has no client side (it is the server, writing the database itself).
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from scheduler_core.cluster import get_backend
from scheduler_core.db.dry_run import SERVER_DRY_RUN, rolled_back
from scheduler_core.declarations import ApplyResult, DeclarationError, documents_parse, manifests_apply
from scheduler_core.reads.forecasts import forecast_view

SUFFIXES = (".yaml", ".yml", ".json")
#: kubectl's values; ``client`` is refused (CLIENT_REFUSED says why).
DRY_RUN_CHOICES = ("none", "server", "client")
CLIENT_REFUSED = (
    "--dry-run=client is not supported: this command has no client side to stop at (it is the "
    "server, writing the database itself); --dry-run=server runs every check and writes nothing"
)


def manifest_files(targets: list[str]) -> list[Path | str]:
    files: list[Path | str] = []
    for target in targets:
        if target == "-":
            files.append("-")
            continue
        path = Path(target)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in SUFFIXES)
            if not found:
                raise CommandError(f"{target}: no *.yaml, *.yml or *.json files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CommandError(f"{target}: no such file or directory")
    return files


def would_start_lines(gangs) -> list[str]:
    """When each gang would start if submitted now, or why that cannot be said: a forecast of
    the snapshot as the dry run left it (services/forecasts.py, ``forecast_for_dry_run``)."""
    # Imported here: it brings the engine and numpy, which an apply that is no dry run never needs.
    from scheduler_core.services.forecasts import forecast_for_dry_run

    forecasts = forecast_for_dry_run(gangs)
    lines = []
    for gang in gangs:
        found = forecasts.get(gang.key, "it would not wait in a queue")
        view = None if isinstance(found, str) else forecast_view(gang, found, sees_all=True)
        if view is None:
            lines.append(f"gang {gang.key}: no forecast: {found if isinstance(found, str) else 'none'}")
        elif view["start_p50"] is None:
            lines.append(f"gang {gang.key} would start: {view['text']} ({view['note']})")
        else:
            at = timezone.localtime(view["start_p50"]).strftime("%Y-%m-%d %H:%M:%S")
            lines.append(f"gang {gang.key} would start {view['text']}, at {at}")
    return lines


class Command(BaseCommand):
    help = "Apply manifests (PodGroup, Koordinator/YuniKorn annotated pods, GangJob, workloads)."

    def add_arguments(self, parser):
        parser.add_argument(
            "-f", "--filename", action="append", required=True, help="FILE, DIR or - (stdin); repeatable"
        )
        parser.add_argument("--submitter", default="", help="recorded on the gangs created")
        parser.add_argument(
            "--dry-run",
            choices=DRY_RUN_CHOICES,
            default="none",
            help="server: run every check and print what would be created, writing nothing",
        )

    def handle(self, *args, filename: list[str], submitter: str, dry_run: str = "none", **options):
        if dry_run == "client":
            raise CommandError(CLIENT_REFUSED)
        try:
            get_backend()
        except ImproperlyConfigured as error:
            raise CommandError(str(error)) from None
        files = manifest_files(filename)
        gangs = {}
        with rolled_back() if dry_run == "server" else nullcontext():
            for source in files:
                name = "<stdin>" if source == "-" else str(source)
                data = sys.stdin.buffer.read() if source == "-" else source.read_bytes()
                try:
                    result = self.load(data, submitter=submitter, name=name)
                except DeclarationError as error:
                    where = f"{name}: {error.field}" if error.field else name
                    raise CommandError(f"{where}: {error.reason}") from None
                for line in result.lines:
                    self.stdout.write(f"{line} {SERVER_DRY_RUN}" if dry_run == "server" else line)
                gangs.update((gang.key, gang) for gang in result.gangs)
            if dry_run == "server":  # inside the transaction: the would-be gangs exist there
                for line in would_start_lines(list(gangs.values())):
                    self.stdout.write(f"{line} {SERVER_DRY_RUN}")

    def load(self, data: bytes, *, submitter: str, name: str) -> ApplyResult:
        """One file's objects, applied in one transaction (``name``: the file, for messages)."""
        return manifests_apply(documents_parse(data), submitter=submitter)
