"""Make sure someone can log in: a superuser ``operator`` on a fresh database.

The random password is printed once and stored nowhere else (Django keeps only its hash); run
again with ``--password`` to set a known one.
"""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

USERNAME = "operator"


class Command(BaseCommand):
    help = "Create the superuser 'operator' if no superuser exists (or set its password)."

    def add_arguments(self, parser):
        parser.add_argument("--password", help="Set this password (creating the user if needed).")
        parser.add_argument(
            "--port", type=int, default=int(os.environ.get("PORT", "8000")), help="For the login hint."
        )

    def handle(self, *args, password: str | None, port: int, **options):
        users = get_user_model()
        login = f"Log in at http://127.0.0.1:{port}/admin/ as {USERNAME}"
        if password is None:
            superusers = list(users.objects.filter(is_superuser=True).values_list("username", flat=True))
            if superusers:
                self.stdout.write(f"A superuser already exists ({', '.join(superusers)}); nothing to do")
                return
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(USERNAME, email="", password=password)
            self.stdout.write(f"Created superuser {USERNAME} with password: {password}")
            self.stdout.write(f"{login} (the password is shown only this once)")
            return
        user, created = users.objects.get_or_create(username=USERNAME)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        self.stdout.write(f"{'Created' if created else 'Updated'} superuser {USERNAME}. {login}")
