"""Make sure someone can log in: a superuser ``operator`` on a fresh database.

The random password is printed once and stored nowhere else (Django keeps only its hash); run
again with ``--password`` to set a known one. ``-o json`` prints what happened as one JSON
object (``make run`` reads it, to show the sign-in in its summary once everything is up).
"""

import json
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
        parser.add_argument(
            "-o",
            "--output",
            choices=["json"],
            help='json: {"username", "password" (the one made now, else null), "created", "superusers"}',
        )

    def handle(self, *args, password: str | None, port: int, output: str | None = None, **options):
        users = get_user_model()
        login = f"Sign in at http://127.0.0.1:{port}/ as {USERNAME}"
        superusers = list(users.objects.filter(is_superuser=True).values_list("username", flat=True))
        outcome = {"username": USERNAME, "password": None, "created": False, "superusers": superusers}
        if password is None:
            if superusers:
                outcome["username"] = USERNAME if USERNAME in superusers else superusers[0]
                existing = ", ".join(superusers)
                self._say(outcome, output, f"A superuser already exists ({existing}); nothing to do")
                return
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(USERNAME, email="", password=password)
            outcome.update(password=password, created=True, superusers=[USERNAME])
            self._say(
                outcome,
                output,
                f"Created superuser {USERNAME} with password: {password}\n"
                f"{login} (the password is shown only this once)",
            )
            return
        user, created = users.objects.get_or_create(username=USERNAME)
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        outcome.update(created=created, superusers=sorted({*superusers, USERNAME}))
        self._say(outcome, output, f"{'Created' if created else 'Updated'} superuser {USERNAME}. {login}")

    def _say(self, outcome: dict, output: str | None, text: str) -> None:
        self.stdout.write(json.dumps(outcome) if output == "json" else text)
