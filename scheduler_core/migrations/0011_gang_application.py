"""Gang.application: the application a gang belongs to (YuniKorn's applicationId), indexed for
the ``?application=`` filter; YuniKorn gangs declared before it get theirs from the declaration."""

from django.db import migrations, models
from django.db.models import Q


def application_backfill(apps, schema_editor):
    Gang = apps.get_model("scheduler_core", "Gang")
    for gang in Gang.objects.filter(source_format="yunikorn").only("pk", "declaration"):
        application = (gang.declaration or {}).get("applicationId")
        if isinstance(application, str) and application:
            Gang.objects.filter(pk=gang.pk).update(application=application)


class Migration(migrations.Migration):
    dependencies = [
        ("scheduler_core", "0010_member_submitter_gang_configured"),
    ]

    operations = [
        migrations.AddField(
            model_name="gang",
            name="application",
            field=models.CharField(blank=True, default="", max_length=253),
        ),
        migrations.AddIndex(
            model_name="gang",
            index=models.Index(
                condition=~Q(application=""), fields=["application"], name="gang_application_idx"
            ),
        ),
        migrations.RunPython(application_backfill, migrations.RunPython.noop),
    ]
