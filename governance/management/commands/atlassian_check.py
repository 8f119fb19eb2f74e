"""Check a real installation against the configured Atlassian site, line by line: settings,
credentials, the site, the scopes people granted, the 'Work Package' field, the wiki space.
Stops at the first class of failure (later classes need the earlier ones), printing the class
and what to do, with exit status 2; warnings and notes leave the status 0."""

from typing import TYPE_CHECKING, Any

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand
from django.utils import timezone

from governance import cleaning
from governance.atlassian import crypto, grants, scopes, service
from governance.models import AtlassianGrant
from governance.tracker import TrackerError

if TYPE_CHECKING:
    from governance.tracker.jira import JiraTracker

CONFIG, CREDENTIALS, SITE, PERMISSIONS, SCOPES, FIELD, WIKI = (
    "settings",
    "credentials",
    "site",
    "permissions",
    "scopes",
    "field",
    "wiki",
)
# What the service account is asked about for others, and writes in the linked projects
# (docs/atlassian.md, items 1 and 3), with where a Jira administrator grants it.
GLOBAL_NEEDED = {
    "USER_PICKER": "Browse users and groups (Jira settings > System > Global permissions)",
}
PROJECT_NEEDED = {
    "BROWSE_PROJECTS": "Browse projects",
    "EDIT_ISSUES": "Edit issues",
}
PROJECTS_PER_CHECK = 500
# Webhooks not registered or not fresh: exit status 2, as the Atlassian issue's item 14 asks.
WEBHOOKS = "webhooks"
FAILED = 2  # the exit status of every failure


class Failed(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Command(BaseCommand):
    help = "Check the Atlassian configuration against the site; exits non-zero on failure."

    def ok(self, text: str) -> None:
        self.stdout.write(self.style.SUCCESS("ok    ") + text)

    def warn(self, text: str) -> None:
        self.stdout.write(self.style.WARNING("note  ") + text)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self.check_settings()
            self.check_oauth_client()
            self.check_token_expiry()
            tracker = self.check_service_account()
            self.check_service_permissions(tracker)
            self.check_scopes()
            self.check_field(tracker)
            self.check_webhooks(tracker)
            self.check_wiki()
        except Failed as failure:
            self.stderr.write(self.style.ERROR("FAIL  ") + f"[{failure.kind}] {failure}")
            raise SystemExit(FAILED) from None
        self.stdout.write(self.style.SUCCESS("All checks passed."))

    # 1 ------------------------------------------------------------------------------------
    def check_settings(self) -> None:
        if settings.TRACKER_BACKEND != "jira":
            raise Failed(CONFIG, f"TRACKER_BACKEND is {settings.TRACKER_BACKEND!r}, not 'jira'.")
        for name in (
            "ATLASSIAN_SITE_URL",
            "ATLASSIAN_CLIENT_ID",
            "ATLASSIAN_CLIENT_SECRET",
            "ATLASSIAN_TOKEN_KEY",
            "ATLASSIAN_SERVICE_EMAIL",
            "ATLASSIAN_SERVICE_API_TOKEN",
        ):
            if not getattr(settings, name):
                raise Failed(CONFIG, f"{name} is not set.")
        try:
            crypto.decrypt(crypto.encrypt("check"))
        except ImproperlyConfigured as exc:
            raise Failed(CONFIG, str(exc)) from None
        self.ok("settings: every ATLASSIAN_* variable is set; ATLASSIAN_TOKEN_KEY is usable")

    # 2 ------------------------------------------------------------------------------------
    def check_oauth_client(self) -> None:
        """A throwaway code at the token endpoint: a known client gets `invalid_grant` (the
        code), an unknown id or a wrong secret gets `invalid_client`/`unauthorized_client`."""
        try:
            answer = requests.post(
                grants.token_url(),
                json={
                    "grant_type": "authorization_code",
                    "client_id": settings.ATLASSIAN_CLIENT_ID,
                    "client_secret": settings.ATLASSIAN_CLIENT_SECRET,
                    "code": "atlassian-check",
                    "redirect_uri": "https://localhost/atlassian-check",
                },
                timeout=(settings.ATLASSIAN_CONNECT_TIMEOUT, settings.ATLASSIAN_READ_TIMEOUT),
            )
        except requests.RequestException as exc:
            raise Failed(
                CREDENTIALS,
                f"the authorization server {grants.token_url()} is not answering "
                f"({type(exc).__name__}).",
            ) from None
        try:
            error = str(answer.json().get("error", ""))
        except ValueError:
            error = ""
        if error in ("invalid_client", "unauthorized_client") or answer.status_code == 401:
            raise Failed(
                CREDENTIALS,
                "the OAuth app refused ATLASSIAN_CLIENT_ID / ATLASSIAN_CLIENT_SECRET "
                f"({error or answer.status_code}): copy both again from the developer console.",
            )
        self.ok("OAuth app: ATLASSIAN_CLIENT_ID and ATLASSIAN_CLIENT_SECRET are accepted")

    # 2, 3 ---------------------------------------------------------------------------------
    def check_service_account(self) -> "JiraTracker":
        from governance.tracker.jira import API, JiraTracker

        tracker = JiraTracker()
        tracker.http.sleep = lambda seconds: None
        me = self.check_token_kind(tracker)
        self.ok(
            f"site {settings.ATLASSIAN_SITE_URL} answers; service account "
            f"{(me or {}).get('displayName') or settings.ATLASSIAN_SERVICE_EMAIL} signs in"
        )
        creds = tracker.service()
        try:
            data = tracker.http.request(
                "getMyPermissions",
                "GET",
                API + "/mypermissions",
                creds,
                params={"permissions": "ADMINISTER"},
            )
        except TrackerError as exc:
            raise Failed(SITE, str(exc)) from None
        admin = ((data or {}).get("permissions") or {}).get("ADMINISTER") or {}
        if not admin.get("havePermission"):
            raise Failed(
                SITE,
                "the service account is not a Jira administrator: it cannot create or keep "
                "the 'Work Package' field.",
            )
        self.ok("service account is a Jira administrator (custom-field upkeep)")
        self._service_account_id = (me or {}).get("accountId") or ""
        return tracker

    def check_service_permissions(self, tracker: "JiraTracker") -> None:
        """The service account's own global and project permissions, asked in one
        `getBulkPermissions` per 500 linked projects: Browse users and groups (the people
        pickers), Browse projects and Edit issues in every linked project (the write-back)."""
        from governance.models import Project

        account_id = getattr(self, "_service_account_id", "")
        if not account_id:
            self.warn("permissions: the service account's id is unknown; not checked")
            return
        projects = {
            number: key
            for pid, key in Project.objects.filter(
                tracker_id__isnull=False, tracker_deleted_at=None
            ).values_list("tracker_id", "key")
            if (number := cleaning.whole_number(pid)) is not None
        }
        ids = sorted(projects)
        chunks = [ids[i : i + PROJECTS_PER_CHECK] for i in range(0, len(ids), PROJECTS_PER_CHECK)]
        granted_global: set[str] = set()
        allowed: dict[str, set[int]] = {p: set() for p in PROJECT_NEEDED}
        for chunk in chunks or [[]]:
            body: dict[str, Any] = {
                "accountId": account_id,
                "globalPermissions": sorted(GLOBAL_NEEDED),
            }
            if chunk:
                body["projectPermissions"] = [
                    {"permissions": sorted(PROJECT_NEEDED), "projects": chunk}
                ]
            try:
                data = tracker.bulk_permissions(body)
            except TrackerError as exc:
                raise Failed(PERMISSIONS, str(exc)) from None
            granted_global |= set((data or {}).get("globalPermissions") or [])
            for row in (data or {}).get("projectPermissions") or []:
                if row.get("permission") in allowed:
                    allowed[row["permission"]] |= set(row.get("projects") or [])
        missing_global = [text for key, text in GLOBAL_NEEDED.items() if key not in granted_global]
        if missing_global:
            raise Failed(
                PERMISSIONS,
                "the service account lacks the global permission "
                + "; ".join(missing_global)
                + ": the people pickers and editor nominations need it. A Jira administrator "
                "grants it to the service account (or a group it is in).",
            )
        lacking = {
            text: sorted(projects[i] for i in ids if i not in allowed[key])
            for key, text in PROJECT_NEEDED.items()
        }
        lacking = {text: keys for text, keys in lacking.items() if keys}
        if lacking:
            raise Failed(
                PERMISSIONS,
                "the service account lacks "
                + "; ".join(f"{text} in {', '.join(keys)}" for text, keys in lacking.items())
                + ": a Jira administrator adds it to those projects' permission schemes "
                "(Project settings > Permissions), or the registers cannot write the "
                "Work Package field there.",
            )
        self.ok(
            "service account may browse users and groups"
            + (f", and browse and edit issues in {len(ids)} linked projects" if ids else "")
        )

    # 2: the service token's kind and expiry ----------------------------------------------
    TOKEN_KINDS = {
        service.CLASSIC: "a classic API token (on the site URL)",
        service.SCOPED: "an API token with scopes (through api.atlassian.com/ex/.../{cloudId})",
    }

    def check_token_expiry(self) -> None:
        """Atlassian tells a token's expiry to no API the token can call: it is configured."""
        try:
            ends = service.expires()
        except service.ServiceTokenError as exc:
            raise Failed(CREDENTIALS, str(exc)) from None
        if ends is None:
            self.warn(
                "service token expiry unknown: set ATLASSIAN_SERVICE_TOKEN_EXPIRES (YYYY-MM-DD, "
                "shown when the token was created) to be warned 30 days before"
            )
            return
        left = (ends - timezone.localdate()).days
        if left < 0:
            raise Failed(
                CREDENTIALS,
                f"the service token expired on {ends.isoformat()} "
                "(ATLASSIAN_SERVICE_TOKEN_EXPIRES): create a new API token for the service "
                "account, set ATLASSIAN_SERVICE_API_TOKEN and ATLASSIAN_SERVICE_TOKEN_EXPIRES.",
            )
        if left <= service.EXPIRY_WARNING_DAYS:
            self.warn(
                f"service token expires in {left} days, on {ends.isoformat()}: create a new "
                "API token for the service account before then, and set "
                "ATLASSIAN_SERVICE_API_TOKEN and ATLASSIAN_SERVICE_TOKEN_EXPIRES"
            )
        else:
            self.ok(f"service token expires on {ends.isoformat()} ({left} days)")

    def _myself(self, tracker: "JiraTracker", kind: str) -> tuple[dict[str, Any] | None, bool]:
        """(the service account, refused with 401) as `kind` of token."""
        from governance.tracker.jira import API

        try:
            creds = service.credentials("Jira", TrackerError, kind)
            return tracker.http.request("getCurrentUser", "GET", API + "/myself", creds), False
        except TrackerError as exc:
            if "HTTP 401" in str(exc):
                return None, True
            if "ATLASSIAN_CLOUD_ID" in str(exc):
                raise Failed(CREDENTIALS, str(exc)) from None
            raise Failed(SITE, f"{settings.ATLASSIAN_SITE_URL} is not reachable: {exc}") from None

    def check_token_kind(self, tracker: "JiraTracker") -> dict[str, Any] | None:
        """/myself with the configured kind of token; refused, the other kind is tried, so
        the failure says which setting to change. Returns the service account."""
        try:
            kind = service.token_kind()
        except service.ServiceTokenError as exc:
            raise Failed(CREDENTIALS, str(exc)) from None
        me, refused = self._myself(tracker, kind)
        if refused:
            other = service.SCOPED if kind == service.CLASSIC else service.CLASSIC
            # With ATLASSIAN_JIRA_URL (a mock) both kinds go to one place: nothing to try.
            if not settings.ATLASSIAN_JIRA_URL and not self._myself(tracker, other)[1]:
                raise Failed(
                    CREDENTIALS,
                    f"the service token is {self.TOKEN_KINDS[other]}, and Atlassian refuses "
                    f"it where ATLASSIAN_SERVICE_TOKEN_KIND={kind} sends it: set "
                    f"ATLASSIAN_SERVICE_TOKEN_KIND={other}.",
                )
            raise Failed(
                CREDENTIALS,
                "Jira refused ATLASSIAN_SERVICE_EMAIL / ATLASSIAN_SERVICE_API_TOKEN "
                "(HTTP 401): create a new API token for the service account, set "
                "ATLASSIAN_SERVICE_API_TOKEN and ATLASSIAN_SERVICE_TOKEN_EXPIRES "
                "(and ATLASSIAN_SERVICE_TOKEN_KIND=scoped for a token with scopes).",
            )
        where = service.base_url("Jira", kind)
        self.ok(f"service token: {self.TOKEN_KINDS[kind]}, accepted at {where}")
        if kind == service.SCOPED:
            needed = ", ".join(scopes.needed(scopes.APP))
            self.warn(
                "Atlassian does not tell a token its scopes; the service token needs: " + needed
            )
        return me

    # 4 ------------------------------------------------------------------------------------
    def check_scopes(self) -> None:
        """Every scope a call made as the person needs (governance.atlassian.scopes), in the
        latest grant's `scope` (the token response's, stored at sign-in and each refresh)."""
        grant = AtlassianGrant.objects.order_by("-updated_at").first()
        if grant is None:
            self.warn("scopes: nobody has signed in yet; they are checked after the first")
            return
        granted = set(grant.scopes.split())
        needed = scopes.needed(scopes.USER)
        needed.setdefault(scopes.OFFLINE, ["refresh tokens"])
        missing = {s: ops for s, ops in needed.items() if s not in granted}
        for scope, operations in needed.items():
            if scope not in missing:
                self.ok(f"scope {scope} granted ({', '.join(operations)})")
        extra = sorted(granted - set(needed))
        if extra:
            self.warn(f"scopes granted but used by no call made as a person: {', '.join(extra)}")
        if missing:
            raise Failed(
                SCOPES,
                "people's sign-in does not grant "
                + "; ".join(f"{s} (needed by {', '.join(ops)})" for s, ops in missing.items())
                + ": add them under Permissions in the developer console; each person has "
                "them from their next sign-in.",
            )

    # 5 ------------------------------------------------------------------------------------
    def check_field(self, tracker: "JiraTracker") -> None:
        from governance.models import TrackerFieldState
        from governance.tracker.jira import two_fields_message

        name = settings.ATLASSIAN_FIELD_NAME
        try:
            found = tracker.fields_named(tracker.service(), name)
        except TrackerError as exc:
            raise Failed(FIELD, str(exc)) from None
        if len(found) > 1:
            raise Failed(FIELD, two_fields_message(name, found))
        if not found:
            raise Failed(
                FIELD,
                f"the custom field '{name}' is missing; it is created by the first "
                "write-back, or link an issue to a work package now.",
            )
        self.ok(f"custom field '{name}' present ({found[0]})")
        state = TrackerFieldState.objects.filter(name=name).first()
        for key, reason in sorted((state.unwritable if state else {}).items()):
            self.warn(f"project {key}: the '{name}' field cannot be written. {reason}")

    # Webhooks (2) -------------------------------------------------------------------------
    def check_webhooks(self, tracker: "JiraTracker") -> None:
        """The Jira webhooks are registered for the linked projects, present on the site and
        fresh (more than 7 days before they expire)."""
        from django.utils import timezone

        from governance import webhooks

        jql = webhooks.wanted_jql()
        if not jql:
            self.warn("webhooks: no linked projects yet, so none are needed")
            return
        held = webhooks.state()
        run = (
            "run `python manage.py runperiodic` (job jira_webhooks) with the outbox worker "
            "(`python manage.py outbox_worker`) running, then check again"
        )
        if not held.webhook_ids:
            if not webhooks.admin_account(held):
                raise Failed(WEBHOOKS, webhooks.NO_ADMIN)
            raise Failed(WEBHOOKS, f"the Jira webhooks are not registered yet: {run}.")
        if held.jql != jql or held.url != webhooks.webhook_url():
            raise Failed(
                WEBHOOKS,
                "the Jira webhooks are registered for other projects or another URL than "
                f"now ({held.jql or 'none'} to {held.url or 'nowhere'}): {run}.",
            )
        try:
            present = {hook.get("id") for hook in tracker.webhooks(held.account_id)}
        except TrackerError as exc:
            raise Failed(
                WEBHOOKS,
                f"the Jira webhooks could not be listed as {held.account_id} ({exc}): that "
                "administrator signs in again at /accounts/atlassian/login/?grant=webhooks, "
                "granting manage:jira-webhook.",
            ) from None
        missing = [i for i in held.webhook_ids if i not in present]
        if missing:
            raise Failed(
                WEBHOOKS,
                f"Jira no longer has the webhooks {missing} (expired or deleted): {run}.",
            )
        left = held.expires_at - timezone.now() if held.expires_at else None
        if left is None:
            raise Failed(WEBHOOKS, f"the Jira webhooks have no known expiry: {run}.")
        if left < webhooks.FRESH_FOR:
            raise Failed(
                WEBHOOKS,
                f"the Jira webhooks expire {held.expires_at:%Y-%m-%d %H:%M} UTC, within "
                f"{webhooks.FRESH_FOR.days} days, and have not been refreshed: {run}.",
            )
        self.ok(
            f"Jira webhooks {held.webhook_ids} registered for {jql} under "
            f"{held.account_id}'s grant; fresh until {held.expires_at:%Y-%m-%d}"
        )

    # 6 ------------------------------------------------------------------------------------
    def check_wiki(self) -> None:
        if settings.WIKI_BACKEND != "confluence":
            self.warn(f"wiki: WIKI_BACKEND={settings.WIKI_BACKEND}; Confluence not checked")
            return
        from governance.wiki import WikiError
        from governance.wiki.confluence import ConfluenceWiki

        wiki = ConfluenceWiki()
        wiki.http.sleep = lambda seconds: None
        try:
            space = wiki.space_id(settings.WIKI_SPACE_KEY)
        except WikiError as exc:
            raise Failed(WIKI, str(exc)) from None
        if not space:
            raise Failed(
                WIKI,
                f"the wiki space {settings.WIKI_SPACE_KEY} is missing: run "
                "`python manage.py wiki_setup`.",
            )
        self.ok(f"wiki space {settings.WIKI_SPACE_KEY} present (id {space})")
