from django.conf import settings
from django.core.management.base import BaseCommand

from scheduler_core.db.bootstrap import create_database_if_missing


class Command(BaseCommand):
    help = "Create the configured PostgreSQL database if it does not exist yet (run before migrate)."

    def handle(self, *args, **options):
        db = settings.DATABASES["default"]
        created = create_database_if_missing(db)
        self.stdout.write(f"database {db['NAME']!r} {'created' if created else 'already exists'}")
