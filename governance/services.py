"""Kernel writes: editor nominations, API tokens, site settings. Each is atomic and audited."""

import hashlib
import secrets
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from governance import audit, formatting, signals, specs
from governance.cleaning import FieldErrors, text
from governance.concurrency import check_version
from governance.errors import NotFound, ValidationFailed
from governance.models import (
    ApiToken,
    EditorNomination,
    Project,
    SiteSettings,
    SiteSettingsSpec,
    User,
    clamp_thresholds,
)
from governance.permissions import Caller, require, sponsor_clash
from governance.tracker import get_tracker

TOKEN_PREFIX = "gov_"


# --- editors ----------------------------------------------------------------------------------


def editor_account_ids(project: Project) -> list[str]:
    return list(project.editor_nominations.values_list("account_id", flat=True))


def editors_set(
    *, caller: Caller, account_ids: Any, expected_revision: int | None = None
) -> list[str]:
    """Replace the project's nominated editors: the Project Lead alone. Every id must be a
    tracker user; a newly nominated one must be able to browse the project and may not be
    its sponsor (separation of duties); a list based on an older `editors_revision` is
    refused (Stale)."""
    require(caller.can_manage_editors, "Only the Project Lead may nominate editors.")
    project = caller.project
    if not isinstance(account_ids, list):
        raise ValidationFailed({"accountIds": ["Must be a list of tracker accountIds."]})
    errors = FieldErrors()
    wanted: list[str] = []
    for value in account_ids:
        if isinstance(value, str) and value.strip() and value.strip() not in wanted:
            wanted.append(value.strip())
    tracker = get_tracker()
    known = tracker.users_bulk(wanted) if wanted else {}
    current = set(editor_account_ids(project))
    for index, value in enumerate(account_ids):
        where = f"accountIds[{index}]"
        if not isinstance(value, str) or not value.strip():
            errors.add(where, "Must be a tracker accountId.")
            continue
        account = value.strip()
        if account not in known:
            errors.add(where, f"No tracker user with accountId {account}.")
        elif account in current:
            continue  # already an editor: kept as is
        elif sponsor_clash(project, project.sponsor_account_id, {account}) == "editor":
            errors.add(where, _sponsor_not_editor(known[account].display_name))
        elif not tracker.can_browse(account, project.key):
            errors.add(
                where,
                f"{known[account].display_name} cannot browse {project.key} in the tracker; "
                "an editor must be able to see the project.",
            )
    errors.raise_if_any()
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        check_version(locked.editors_revision, expected_revision)
        before = editor_account_ids(locked)
        # The rule again under the lock: a sponsor named since the checks above is seen here.
        added = [a for a in wanted if a not in before]
        if sponsor_clash(locked, locked.sponsor_account_id, added) == "editor":
            index = [v.strip() for v in account_ids].index(locked.sponsor_account_id)
            name = known[locked.sponsor_account_id].display_name
            raise ValidationFailed({f"accountIds[{index}]": [_sponsor_not_editor(name)]})
        EditorNomination.objects.filter(project=locked).exclude(account_id__in=wanted).delete()
        EditorNomination.objects.bulk_create(
            [
                EditorNomination(
                    project=locked, account_id=a, nominated_by_account_id=caller.account_id
                )
                for a in wanted
                if a not in before
            ]
        )
        after = editor_account_ids(locked)
        if sorted(before) != sorted(after):
            locked.editors_revision += 1
            locked.save(update_fields=["editors_revision"])
            project.editors_revision = locked.editors_revision
            audit.record_in(
                project,
                caller.account_id,
                "project.editors_changed",
                "project",
                project.key,
                {"editorAccountIds": {"before": before, "after": after}},
            )
    return after


def _sponsor_not_editor(name: str) -> str:
    return (
        f"{name} is the business case's decision authority: "
        "nobody approves their own work, so the sponsor cannot be an editor."
    )


def _one_account(account_id: Any) -> str:
    if not isinstance(account_id, str) or not account_id.strip():
        raise ValidationFailed({"accountId": ["Choose a person."]})
    return account_id.strip()


def editor_add(*, caller: Caller, account_id: Any) -> list[str]:
    account_id = _one_account(account_id)
    current = editor_account_ids(caller.project)
    return editors_set(caller=caller, account_ids=[*current, account_id])


def editor_remove(*, caller: Caller, account_id: Any) -> list[str]:
    account_id = _one_account(account_id)
    current = editor_account_ids(caller.project)
    if account_id not in current:
        raise ValidationFailed({"accountId": ["This person is not an editor of the project."]})
    return editors_set(caller=caller, account_ids=[a for a in current if a != account_id])


# --- API tokens -------------------------------------------------------------------------------


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """A new personal API token. The raw token is returned once and never stored."""
    cleaned, error = text(name, max_length=100, required=True)
    if error:
        raise ValidationFailed({"name": [error]})
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, name=cleaned, prefix=raw[:10], digest=_digest(raw)
        )
        audit.record(
            actor_account_id=user.account_id,
            kind="token.created",
            target_type="apiToken",
            target_id=token.pk,
            changes={"name": {"before": None, "after": cleaned}},
        )
    return token, raw


def token_revoke(*, user: User, token_id: int) -> ApiToken:
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(pk=token_id, user=user).first()
        if token is None:
            raise NotFound("No such token.")
        if token.revoked_at is None:
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            audit.record(
                actor_account_id=user.account_id,
                kind="token.revoked",
                target_type="apiToken",
                target_id=token.pk,
                changes={"revokedAt": {"before": None, "after": token.revoked_at}},
            )
    return token


def user_for_token(raw: str) -> User | None:
    if not raw.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=_digest(raw), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


# --- site settings ----------------------------------------------------------------------------


def rag_thresholds(site: SiteSettings | None = None) -> dict[str, float]:
    """The effective thresholds: the site's overrides over the settings defaults, each in its
    range (`clamp_thresholds`: one stored before the ranges cannot overflow a date)."""
    site = site or SiteSettings.load()
    return clamp_thresholds({**settings.RAG_THRESHOLDS, **(site.rag_thresholds or {})})


def enabled_themes(site: SiteSettings | None = None) -> list[str]:
    site = site or SiteSettings.load()
    return [t["name"] for t in site.themes if t.get("enabled", True)]


def disabled_themes(site: SiteSettings | None = None) -> list[str]:
    """The site's themes no new business case may take (existing cases keep them)."""
    site = site or SiteSettings.load()
    return [t["name"] for t in site.themes if not t.get("enabled", True)]


def _theme_renames(
    themes: list[dict[str, Any]], stored: list[dict[str, Any]], errors: FieldErrors
) -> list[tuple[str, str]]:
    """The renames a new theme list makes: (old, new) for each item whose renamedFrom names a
    stored theme and whose name differs from it (in any letter). The items are stored
    without renamedFrom."""
    by_fold = {t["name"].casefold(): t["name"] for t in stored}
    kept = {t["name"].casefold() for t in themes if not t.get("renamedFrom")}
    renames, taken = [], set()
    for index, theme in enumerate(themes):
        was = theme.pop("renamedFrom", None)
        if not was:
            continue
        old = by_fold.get(was.casefold())
        if old is None:
            errors.add(f"themes[{index}].renamedFrom", f"There is no theme '{was}' to rename.")
        elif old.casefold() in taken:
            errors.add(f"themes[{index}].renamedFrom", f"'{old}' is renamed twice.")
        elif old.casefold() in kept and old.casefold() != theme["name"].casefold():
            errors.add(
                f"themes[{index}].renamedFrom",
                f"'{old}' is both kept and renamed: remove one of the two.",
            )
        else:
            taken.add(old.casefold())
            if old != theme["name"]:
                renames.append((old, theme["name"]))
    return renames


def site_settings_for_everyone(site: SiteSettings) -> dict[str, Any]:
    """The site settings a signed-in person outside the governance group reads: the themes a
    business case may take (enabled ones) and the currency amounts are in."""
    return {
        "themes": [{"name": name, "enabled": True} for name in enabled_themes(site)],
        "currency": site.currency,
    }


def site_settings_to_dict(site: SiteSettings) -> dict[str, Any]:
    """Every declared field of the site settings (SiteSettingsSpec), as stored, but the
    thresholds: the effective ones (`rag_thresholds`). Blank reads as null."""
    body = specs.to_dict(SiteSettingsSpec, site, specs.fields(SiteSettingsSpec))
    body["themes"] = [
        {"name": t["name"], "enabled": bool(t.get("enabled", True))} for t in site.themes
    ]
    body["ragThresholds"] = rag_thresholds(site)
    for api in ("governanceGroup", "updatedByAccountId"):
        body[api] = body[api] or None
    return body


def _merged_thresholds(
    sent: dict[str, Any], stored: dict[str, Any], errors: FieldErrors
) -> dict[str, Any]:
    """The site's threshold overrides after this PATCH: keys sent are set (a null goes back to
    the default), keys not sent keep their stored override. The order of each pair is checked
    on the result."""
    merged = dict(stored or {})
    for key, value in sent.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    effective = {**settings.RAG_THRESHOLDS, **merged}
    for low, high in (
        ("costGreenMaxPct", "costAmberMaxPct"),
        ("scheduleGreenMaxDays", "scheduleAmberMaxDays"),
        ("riskAmberMinScore", "riskRedMinScore"),
    ):
        if effective[low] > effective[high]:
            errors.add(f"ragThresholds.{high}", f"Must be at least {low} ({effective[low]}).")
    return merged


def site_settings_update(
    *, actor: User, data: dict[str, Any], expected_revision: int | None = None
) -> SiteSettings:
    """Site admins only (checked by the caller's gate). Keys: governanceGroup, themes,
    brCadenceDefault, ragThresholds, currency; any other key is refused."""
    errors = FieldErrors()
    declared = specs.fields(SiteSettingsSpec)
    for key in data:
        if key not in declared:
            errors.add(key, "Unknown setting.")
    partial, errors = specs.validate(
        SiteSettingsSpec, {k: v for k, v in data.items() if k in declared}, errors=errors
    )
    changes = specs.sent(partial)
    group = changes.get("governance_group")
    if group and not get_tracker().group_exists(group):
        errors.add("governanceGroup", f"The tracker has no group called '{group}'.")
    if "rag_thresholds" in changes:
        stored = SiteSettings.load().rag_thresholds or {}
        changes["rag_thresholds"] = _merged_thresholds(changes["rag_thresholds"], stored, errors)
    errors.raise_if_any()
    with transaction.atomic():
        site = SiteSettings.objects.select_for_update().get(pk=SiteSettings.load().pk)
        check_version(site.revision, expected_revision)
        renames = []
        if "themes" in changes:
            renames = _theme_renames(changes["themes"], site.themes, errors)
            errors.raise_if_any()
        before = {field: getattr(site, field) for field in changes}
        for field, value in changes.items():
            setattr(site, field, value)
        site.updated_by_account_id = actor.account_id
        site.revision += 1
        site.save()
        recorded: dict[str, Any] = dict(audit.diff(before, changes))
        if renames:
            recorded["themeRenamed"] = [{"before": old, "after": new} for old, new in renames]
        audit.record(
            actor_account_id=actor.account_id,
            kind="site_settings.updated",
            target_type="siteSettings",
            target_id=site.pk,
            changes=recorded,
        )
        if renames:
            # The business cases naming an old theme take its new one, in this transaction
            # (all the renames at once: a swap or a chain moves each case once).
            signals.theme_renamed.send(
                sender=None, renames=renames, actor_account_id=actor.account_id
            )
        # Now (this transaction reads its own write) and again once others can see it.
        formatting.forget_currency()
        transaction.on_commit(formatting.forget_currency, robust=True)
    return site
