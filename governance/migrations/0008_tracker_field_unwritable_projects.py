from django.db import migrations, models


def cover_projects_again(apps, schema_editor):
    """Projects covered before the field was put on edit screens are covered again (the
    context part is idempotent; the screens part is new)."""
    apps.get_model("governance", "TrackerFieldState").objects.update(projects={})


class Migration(migrations.Migration):
    dependencies = [
        ("governance", "0007_periodic_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="trackerfieldstate",
            name="unwritable",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(cover_projects_again, migrations.RunPython.noop),
    ]
