"""A theme renamed in the site settings: every business case naming the old theme takes the
new name, in the settings' transaction, each case audited. The kernel's `site_settings_update`
is the one way a theme is renamed (the settings page and PATCH /site-settings call it); it
announces each rename through `governance.signals.theme_renamed`, which this receives."""

from typing import Any

from django.utils import timezone

from charter.models import BusinessCase
from governance import audit, signals
from governance.models import Project


def carry_theme_renames(*, renames: list[tuple[str, str]], actor_account_id: str) -> list[str]:
    """Move every business case whose theme is one of the renames' old names (ignoring case
    and surrounding spaces) to that rename's new name; returns the project keys moved. The
    cases are chosen before any is written, so a swap (A to B and B to A) or a chain (A to B,
    B to C) moves each case once, by the name it had. Compared in Python (`str.casefold`),
    the same on every database. Locks the projects, then the cases (the order every
    business-case write takes); bumps each case's revision (a form opened before the rename
    cannot write the old name back unnoticed); rewrites their derived health once. Call
    inside the renaming transaction."""
    wanted = {old.strip().casefold(): new for old, new in renames}
    ids = [
        pk
        for pk, theme in BusinessCase.objects.exclude(theme="").values_list("pk", "theme")
        if theme.strip().casefold() in wanted
    ]
    if not ids:
        return []
    keys = dict(
        Project.objects.select_for_update()
        .filter(pk__in=ids)
        .order_by("pk")
        .values_list("pk", "key")
    )
    cases = BusinessCase.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    moved = []
    now = timezone.now()
    with signals.deferred_project_changes():
        for case in cases:
            new = wanted.get(case.theme.strip().casefold())
            if new is None:
                continue  # changed since the first read
            before = case.theme
            case.theme = new
            case.revision += 1
            case.updated_at = now
            case.save(update_fields=["theme", "revision", "updated_at"])
            key = keys[case.pk]
            audit.record(
                actor_account_id=actor_account_id,
                project_key=key,
                kind="charter.theme_renamed",
                target_type="businessCase",
                target_id=key,
                changes=audit.diff({"theme": before}, {"theme": new}),
            )
            signals.project_facts_changed(case.pk)
            moved.append(key)
    return moved


def on_theme_renamed(
    sender: Any, *, renames: list[tuple[str, str]], actor_account_id: str, **_: Any
) -> None:
    carry_theme_renames(renames=renames, actor_account_id=actor_account_id)
