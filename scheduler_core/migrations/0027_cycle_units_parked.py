from django.db import migrations, models


class Migration(migrations.Migration):
    """SchedulingCycle.units_parked: what the engine's requeue book did not try."""

    dependencies = [("scheduler_core", "0026_topology_exclusive")]
    operations = [
        migrations.AddField(
            "schedulingcycle",
            "units_parked",
            models.PositiveIntegerField(
                default=0,
                help_text="Units the engine's requeue book did not try: they failed behind the same head "
                "and nothing that could let them place happened since (CycleResult.parked).",
            ),
        ),
    ]
