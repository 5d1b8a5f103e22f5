"""``manage.py kill NAMESPACE/NAME...``: delete the gangs' pods and never schedule them again, as
the dashboard's Kill button and ``POST /api/v1/gangs/{ns}/{name}/kill/`` do."""

from scheduler_core.services.operator import gang_kill

from ._gang_action import GangActionCommand


class Command(GangActionCommand):
    help = "Kill gangs: delete their pods, never schedule them again (NAMESPACE/NAME...)."
    done = "killed"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--reason", default="", help="why (recorded after 'killed by <by>: ')")

    def act(self, gang, by, options):
        return gang_kill(gang=gang, by=by, reason=options["reason"])
