from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from scheduler_core.db.bootstrap import postgres_warnings, services_problem


class Command(BaseCommand):
    help = (
        "Exit non-zero with one line saying how to start PostgreSQL or Redis if either is down; "
        "warn about server settings that slow gangsched down as it grows (autovacuum off)."
    )

    def handle(self, *args, **options):
        problem = services_problem(settings.DATABASES["default"], settings.REDIS_URL)
        if problem:
            raise CommandError(problem)
        for warning in postgres_warnings(settings.DATABASES["default"]):
            self.stderr.write(f"Warning: {warning}")
        self.stdout.write("PostgreSQL and Redis are reachable")
