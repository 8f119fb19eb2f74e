from django.db import migrations, models


def _implied(change) -> list[str]:
    implied = []
    if (change.impact_scope or "").strip():
        implied.append("Scope")
    if change.impact_budget:
        implied.append("Budget")
    if change.impact_schedule_days:
        implied.append("Schedule")
    return implied


def mark_chosen(apps, schema_editor):
    """A stored list other than the one the impacts imply was chosen by a person; one equal
    to it is read as inferred (and follows the impacts from now on)."""
    ChangeRequest = apps.get_model("registers", "ChangeRequest")
    chosen = [
        change.pk
        for change in ChangeRequest.objects.only(
            "dimensions", "impact_scope", "impact_budget", "impact_schedule_days"
        ).iterator()
        if change.dimensions and list(change.dimensions) != _implied(change)
    ]
    ChangeRequest.objects.filter(pk__in=chosen).update(dimensions_chosen=True)


class Migration(migrations.Migration):
    dependencies = [
        ("registers", "0002_change_approver_locked"),
    ]

    operations = [
        migrations.AddField(
            model_name="changerequest",
            name="dimensions_chosen",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(mark_chosen, migrations.RunPython.noop),
    ]
