"""Member.owner (which workload recreates a pod; empty: a bare Pod) and Gang.match_policy.

Existing pods of a GangJob or a Volcano Job get their owner back from their gang (a GangJob's
gang is named after it; a vcjob's pods carry ``volcano.sh/job-name``); pods of other workloads
applied before this migration read as bare until their workload is applied again.
"""

from django.db import migrations, models


def owners_backfill(apps, schema_editor):
    Member = apps.get_model("scheduler_core", "Member")
    for member in Member.objects.filter(gang__source_format__in=["gangjob", "volcano-job"]).select_related("gang"):
        if member.gang.source_format == "gangjob":
            owner = f"gangjob.gangsched.io/{member.gang.name}"
        else:
            owner = f"job.batch.volcano.sh/{member.annotations.get('volcano.sh/job-name') or member.gang.name}"
        Member.objects.filter(pk=member.pk).update(owner=owner)


class Migration(migrations.Migration):

    dependencies = [
        ('scheduler_core', '0011_gang_application'),
    ]

    operations = [
        migrations.AddField(
            model_name='gang',
            name='match_policy',
            field=models.CharField(choices=[('once-satisfied', 'once-satisfied'), ('only-waiting', 'only-waiting'), ('waiting-and-running', 'waiting-and-running')], default='once-satisfied', max_length=24),
        ),
        migrations.AddField(
            model_name='member',
            name='owner',
            field=models.CharField(blank=True, default='', max_length=320),
        ),
        migrations.AddConstraint(
            model_name='gang',
            constraint=models.CheckConstraint(condition=models.Q(('match_policy__in', ['once-satisfied', 'only-waiting', 'waiting-and-running'])), name='gang_match_policy_valid'),
        ),
        migrations.RunPython(owners_backfill, migrations.RunPython.noop),
    ]
