"""Load manifests into the cluster, as ``kubectl apply -f`` does.

    manage.py apply -f trainer.yaml [-f more/ ...] [-f -]

A directory loads its ``*.yaml``, ``*.yml`` and ``*.json`` files in name order; ``-`` reads
standard input. Each file is applied in its own transaction: a refused file writes nothing, the
command stops there and exits non-zero, naming the file, the field and the reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from scheduler_core.cluster import get_backend
from scheduler_core.declarations import ApplyResult, DeclarationError, documents_parse, manifests_apply

SUFFIXES = (".yaml", ".yml", ".json")


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


class Command(BaseCommand):
    help = "Apply manifests (PodGroup, Koordinator/YuniKorn annotated pods, GangJob, workloads)."

    def add_arguments(self, parser):
        parser.add_argument(
            "-f", "--filename", action="append", required=True, help="FILE, DIR or - (stdin); repeatable"
        )
        parser.add_argument("--submitter", default="", help="recorded on the gangs created")

    def handle(self, *args, filename: list[str], submitter: str, **options):
        try:
            get_backend()
        except ImproperlyConfigured as error:
            raise CommandError(str(error)) from None
        for source in manifest_files(filename):
            name = "<stdin>" if source == "-" else str(source)
            data = sys.stdin.buffer.read() if source == "-" else source.read_bytes()
            try:
                result = self.load(data, submitter=submitter, name=name)
            except DeclarationError as error:
                where = f"{name}: {error.field}" if error.field else name
                raise CommandError(f"{where}: {error.reason}") from None
            for line in result.lines:
                self.stdout.write(line)

    def load(self, data: bytes, *, submitter: str, name: str) -> ApplyResult:
        """One file's objects, applied in one transaction (``name``: the file, for messages)."""
        return manifests_apply(documents_parse(data), submitter=submitter)
