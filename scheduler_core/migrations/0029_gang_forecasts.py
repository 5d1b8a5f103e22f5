"""GangForecast (models/forecasts.py), and the API read cache's notification when forecasts change.

The API's gang objects carry their forecast, so a forecast run's writes must make the cached
answers of the gangs' submitters stale, as a change of their members does: the same per-statement
trigger function (dashboard 0008, 0009: it names the submitter of each ``gang_id`` changed, and
marks the scheduler's sessions' changes as soft).
"""

import django.db.models.deletion
from django.db import migrations, models


CREATE, DROP = [], []
for event in ("INSERT", "UPDATE", "DELETE"):
    name = f"gangsched_api_gangforecast_{event.lower()}"
    rows = "OLD TABLE AS changed" if event == "DELETE" else "NEW TABLE AS changed"
    CREATE.append(
        f"CREATE TRIGGER {name} AFTER {event} ON scheduler_core_gangforecast REFERENCING {rows} "
        "FOR EACH STATEMENT EXECUTE FUNCTION gangsched_api_gang_rows_changed();"
    )
    DROP.append(f"DROP TRIGGER IF EXISTS {name} ON scheduler_core_gangforecast;")


class Migration(migrations.Migration):

    dependencies = [
        ('scheduler_core', '0028_runtime_estimates'),
        ('dashboard', '0009_api_cache_scheduler_mark'),
    ]

    operations = [
        migrations.CreateModel(
            name='GangForecast',
            fields=[
                ('gang', models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, primary_key=True, related_name='forecast', serialize=False, to='scheduler_core.gang')),
                ('made_at', models.DateTimeField(help_text="The time the forecast was made for (its snapshot's).")),
                ('status', models.CharField(choices=[('expected', 'expected'), ('later', 'later'), ('none', 'none')], max_length=8)),
                ('note', models.TextField(blank=True, default='', help_text='Why, when the status is not expected.')),
                ('start_p10', models.DateTimeField(blank=True, null=True)),
                ('start_p50', models.DateTimeField(blank=True, null=True)),
                ('start_p90', models.DateTimeField(blank=True, null=True)),
                ('queue', models.CharField(blank=True, default='', max_length=253)),
                ('position_in_queue', models.PositiveIntegerField()),
                ('position_in_local_queue', models.PositiveIntegerField()),
                ('position_in_cluster', models.PositiveIntegerField()),
                ('own_in_queue', models.PositiveIntegerField()),
                ('own_in_local_queue', models.PositiveIntegerField()),
                ('own_in_cluster', models.PositiveIntegerField()),
                ('waiting_reason', models.CharField(blank=True, default='', max_length=32)),
                ('waiting_message', models.TextField(blank=True, default='')),
                ('waiting_message_own', models.TextField(blank=True, default='', help_text="The message as the gang's submitter reads it.")),
            ],
            options={
                'constraints': [models.CheckConstraint(condition=models.Q(('status__in', ['expected', 'later', 'none'])), name='gangforecast_status_valid'), models.CheckConstraint(condition=models.Q(('start_p50__isnull', True), ('status', 'expected'), _connector='OR'), name='gangforecast_start_only_expected')],
            },
        ),
        migrations.RunSQL("\n".join(CREATE), "\n".join(DROP)),
    ]
