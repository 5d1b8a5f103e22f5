from django.db import migrations, models

#: JobSet's exclusive placement, which jobset.py copies onto every pod of an exclusive child Job.
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"


def exclusive_jobsets_mark(apps, schema_editor):
    """The child Jobs' gangs of JobSets applied before the column: exclusive where their pods
    carry the annotation naming the level the gang is required in, so that running JobSets keep
    each Job alone in its domain without being applied again."""
    Gang = apps.get_model("scheduler_core", "Gang")
    Member = apps.get_model("scheduler_core", "Member")
    marked = []
    for gang in (
        Gang.objects.filter(source_format="jobset")
        .exclude(topology_required="")
        .only("pk", "topology_required")
    ):
        member = Member.objects.filter(gang_id=gang.pk).only("annotations").first()
        if member is not None and (member.annotations or {}).get(EXCLUSIVE) == gang.topology_required:
            marked.append(gang.pk)
    Gang.objects.filter(pk__in=marked).update(topology_exclusive=True)


class Migration(migrations.Migration):
    """Gang.topology_exclusive: a required domain of its own among exclusive gangs."""

    dependencies = [("scheduler_core", "0025_queue_preemption_rules")]
    operations = [
        migrations.AddField("gang", "topology_exclusive", models.BooleanField(default=False)),
        migrations.RunPython(exclusive_jobsets_mark, migrations.RunPython.noop),
    ]
