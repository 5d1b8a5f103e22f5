"""Create objects from manifests, as ``kubectl create -f`` does.

    manage.py create -f sample-job.yaml [-f more/ ...] [-f -]

The difference from ``apply``: an object named by ``metadata.generateName`` gets a name made
for it (``<generateName><5 random characters>``, as the API server makes it), and an object
that exists already is an error (``AlreadyExists``) instead of a change. Kueue's samples are
written for this (``kubectl create -f``). Each file is created in its own transaction: a file
with a refused or existing object creates nothing and the command stops there, exiting non-zero.
"""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import transaction

from scheduler_core.declarations import ApplyResult, documents_parse, manifests_apply
from scheduler_core.declarations.generate_name import names_generate

from . import apply

CREATED = " created"


class Command(apply.Command):
    help = "Create objects from manifests (generateName honoured; an existing object is an error)."

    def load(self, data: bytes, *, submitter: str, name: str) -> ApplyResult:
        with transaction.atomic():
            result = manifests_apply(names_generate(documents_parse(data)), submitter=submitter)
            existing = [line.rsplit(" ", 1)[0] for line in result.lines if not line.endswith(CREATED)]
            if existing:  # raised inside the transaction: nothing of the file is kept
                where = f'error when creating "{name}"'
                raise CommandError(
                    f"Error from server (AlreadyExists): {where}: {existing[0]} already exists"
                )
        return result
