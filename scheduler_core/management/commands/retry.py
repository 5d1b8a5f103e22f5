"""``manage.py retry NAMESPACE/NAME...``: send TimedOut or Failed gangs back to the queue, whole,
as the dashboard's Retry button and ``POST /api/v1/gangs/{ns}/{name}/retry/`` do."""

from scheduler_core.services.operator import gang_retry

from ._gang_action import GangActionCommand


class Command(GangActionCommand):
    help = "Send TimedOut or Failed gangs back to the queue (NAMESPACE/NAME...)."
    done = "retried"

    def act(self, gang, by, options):
        return gang_retry(gang=gang, by=by)
