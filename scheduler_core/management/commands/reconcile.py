"""Repair drift between the scheduler's derived state and the cluster, now.

    manage.py reconcile

Beat runs the same sweep every 30 cycle intervals (``scheduler_core.tasks.reconcile_drift``);
this runs it once and prints one line per repair (each is also in its gang's history).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.services.reconcile import LeaseBusy, reconcile


class Command(BaseCommand):
    help = "Repair drift between the scheduler's derived state and the cluster; print the repairs."

    def handle(self, *args, **options) -> None:
        try:
            repairs = reconcile(holder="manage.py reconcile")
        except LeaseBusy as error:
            raise CommandError(f"{error}: try again when the cycle has finished") from None
        for repair in repairs:
            self.stdout.write(f"{repair.kind:<13} {repair.subject}: {repair.detail}")
        self.stdout.write(f"{len(repairs)} repair{'s' if len(repairs) != 1 else ''}")
