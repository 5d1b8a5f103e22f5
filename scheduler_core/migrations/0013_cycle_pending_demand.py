"""SchedulingCycle.pending_demand: what each cycle left pending, per resource (the overview's
pending-demand chart and /api/v1/cluster/'s pendingDemand). Cycles written before it read as
no demand."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_core", "0012_member_owner_gang_match_policy"),
    ]

    operations = [
        migrations.AddField(
            model_name="schedulingcycle",
            name="pending_demand",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="Summed requests per resource (canonical integers) of the pods the cycle left "
                "pending: the engine's CycleResult.pending_demand.",
            ),
        ),
    ]
