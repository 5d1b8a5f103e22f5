"""What ``manage.py retry`` and ``manage.py kill`` share: the Timed out page's two buttons, from a
terminal. Both go through ``scheduler_core/services/operator.py``, as the API, the pages and the
admin do, so a press here is the same history event (naming ``--by``) and the same refusal."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from scheduler_core.models import Gang
from scheduler_core.services.operator import GangActionError


class GangActionCommand(BaseCommand):
    """One gang action on each NAMESPACE/NAME given; every refusal is reported, then the command
    exits non-zero."""

    done = ""  # the past tense printed: "retried", "killed"

    def add_arguments(self, parser):
        parser.add_argument("gangs", nargs="+", metavar="NAMESPACE/NAME")
        parser.add_argument("--by", default="an operator", help="who does it (in the gang's history)")

    def act(self, gang: Gang, by: str, options: dict) -> Gang:
        raise NotImplementedError

    def handle(self, *args, gangs: list[str], by: str, **options):
        errors = []
        for key in gangs:
            namespace, _, name = key.partition("/")
            gang = Gang.objects.filter(namespace=namespace, name=name).first() if name else None
            if gang is None:
                errors.append(f"gang {key!r} not found (give NAMESPACE/NAME)")
                continue
            try:
                gang = self.act(gang, by, options)
            except GangActionError as error:
                errors.append(str(error))
                continue
            self.stdout.write(f"gang {gang.key} {self.done}: {gang.phase}")
        if errors:
            raise CommandError("; ".join(errors))
