from django.conf import settings
from django.db import migrations, models


def backfill_tracker_ids(apps, schema_editor):
    """Key the existing mirrors by the tracker's project id where it is known without asking
    the tracker: the local tracker's row ids (TRACKER_BACKEND=local), or the Jira ids the
    'Work Package' field state recorded for the projects its context covers. A mirror left
    without one gets it on its next read, matched by key (governance.permissions.sync_project)."""
    Project = apps.get_model("governance", "Project")
    if settings.TRACKER_BACKEND == "local":
        LocalProject = apps.get_model("local_tracker", "LocalProject")
        known = {key: str(pk) for key, pk in LocalProject.objects.values_list("key", "pk")}
    else:
        known = {}
        FieldState = apps.get_model("governance", "TrackerFieldState")
        for projects in FieldState.objects.values_list("projects", flat=True):
            known.update({key: str(pid) for key, pid in (projects or {}).items() if pid})
    taken = set(Project.objects.exclude(tracker_id=None).values_list("tracker_id", flat=True))
    rows = []
    for project in Project.objects.filter(tracker_id=None, key__in=list(known)):
        tracker_id = known[project.key]
        if tracker_id not in taken:
            project.tracker_id = tracker_id
            taken.add(tracker_id)
            rows.append(project)
    Project.objects.bulk_update(rows, ["tracker_id"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0008_tracker_field_unwritable_projects"),
        ("local_tracker", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="tracker_id",
            field=models.CharField(blank=True, max_length=64, null=True, unique=True),
        ),
        migrations.AddField(
            model_name="project",
            name="former_keys",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="project",
            name="tracker_deleted_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(backfill_tracker_ids, migrations.RunPython.noop),
    ]
