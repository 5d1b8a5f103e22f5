from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from scheduler_core.dbsetup import services_problem


class Command(BaseCommand):
    help = "Exit non-zero with one line saying how to start PostgreSQL or Redis if either is down."

    def handle(self, *args, **options):
        problem = services_problem(settings.DATABASES["default"], settings.REDIS_URL)
        if problem:
            raise CommandError(problem)
        self.stdout.write("PostgreSQL and Redis are reachable")
