"""The site's default stage set: Initiation, Design, Build, Transition (renamed, added to or
removed in the administration)."""

from typing import Any

from django.db import migrations

DEFAULTS = ["Initiation", "Design", "Build", "Transition"]


def seed(apps: Any, schema_editor: Any) -> None:
    default_stage = apps.get_model("gates", "DefaultStage")
    if default_stage.objects.exists():
        return
    default_stage.objects.bulk_create(
        default_stage(name=name, position=position) for position, name in enumerate(DEFAULTS, 1)
    )


def unseed(apps: Any, schema_editor: Any) -> None:
    apps.get_model("gates", "DefaultStage").objects.filter(name__in=DEFAULTS).delete()


class Migration(migrations.Migration):
    dependencies = [("gates", "0001_stage_gates")]

    operations = [migrations.RunPython(seed, unseed)]
