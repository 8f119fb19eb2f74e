"""Jira dynamic webhooks: the app stays in step with the site instead of finding out at the
next page view.

Held: `registerDynamicWebhooks` for `jira:issue_updated` and `jira:issue_deleted` with the JQL
`project in (<ids>)` over the linked projects (governance mirrors keyed by Jira's project id),
under the OAuth grant of a Jira administrator who granted `manage:jira-webhook` (dynamic
webhooks need a person's OAuth token: the service account's API token cannot hold them).
They expire 30 days after registration or the last `refreshWebhooks`. The `jira_webhooks`
periodic job (hourly) compares what is held with what should be (the JQL, the URL, the
grant) and queues one outbox task to register again or to refresh; the task makes the calls,
outside any request, retried by the outbox.

Received: POST /hooks/jira/ with `Authorization: Bearer <JWT>` that Jira signs with the
app's client secret (HS256), bound to the request by its `qsh` claim (Atlassian's query string
hash of the method, path and query; docs/atlassian.md item 13). Anything else (no token,
another key or algorithm, expired, living longer than MAX_TOKEN_LIFETIME, an issuer other
than the client id, no qsh or another request's) is refused with 401 and nothing is stored.
The body is bound by nothing Atlassian documents: no claim carries its hash. The same delivery
twice (Jira's webhook identifier header; else event, timestamp and entity) changes nothing
twice. A deleted issue, or one moved under another key, marks the links to it broken; a
project event (sent only to webhooks an administrator registers; dynamic webhooks do not
carry them) follows a key change or marks the project deleted."""

import datetime as dt
import hashlib
import hmac
import logging
import re
import time
from typing import Any
from urllib.parse import quote

import jwt
from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from governance import audit, cleaning, outbox, periodic, signals
from governance.cleaning import text_error
from governance.http import page
from governance.mirror import sync_project
from governance.models import (
    AtlassianGrant,
    OutboundTask,
    Project,
    TrackerEventReceipt,
    TrackerWebhooks,
)
from governance.tracker import TrackerError, get_tracker
from governance.tracker.base import TrackerProject
from governance.tracker.jira import ISSUE_KEY, PROJECT_KEY, JiraTracker

logger = logging.getLogger(__name__)

EVENTS = ["jira:issue_updated", "jira:issue_deleted"]
SCOPE = "manage:jira-webhook"
LIFETIME = dt.timedelta(days=30)
# Refreshed once fewer than 20 of the 30 days remain: ten days' margin for an outage.
REFRESH_WITHIN = dt.timedelta(days=20)
# atlassian_check calls them fresh while more than 7 days remain.
FRESH_FOR = dt.timedelta(days=7)
TASK = "governance.jira_webhooks"
IDENTIFIER_HEADER = "X-Atlassian-Webhook-Identifier"


def webhook_url() -> str:
    return settings.ATLASSIAN_WEBHOOK_URL or settings.SITE_URL.rstrip("/") + "/hooks/jira/"


def state() -> TrackerWebhooks:
    held, _ = TrackerWebhooks.objects.get_or_create(pk=1)
    return held


def linked_project_ids() -> list[str]:
    ids = Project.objects.filter(tracker_id__isnull=False, tracker_deleted_at=None).values_list(
        "tracker_id", flat=True
    )
    return sorted(
        (i for i in ids if i is not None and cleaning.whole_number(i) is not None), key=int
    )


def wanted_jql() -> str:
    ids = linked_project_ids()
    return f"project in ({', '.join(ids)})" if ids else ""


def _granted(account_id: str) -> bool:
    return bool(account_id) and any(
        SCOPE in scopes.split()
        for scopes in AtlassianGrant.objects.filter(account_id=account_id).values_list(
            "scopes", flat=True
        )
    )


def plan(held: TrackerWebhooks, now: dt.datetime) -> str:
    """What the held webhooks need: "register" (none yet, or the JQL, URL or grant changed),
    "refresh" (expiring within REFRESH_WITHIN), or "" (nothing). Local facts only."""
    jql = wanted_jql()
    if not jql and not held.webhook_ids:
        return ""
    configured = settings.ATLASSIAN_WEBHOOK_ACCOUNT_ID
    if (
        not held.webhook_ids
        or held.jql != jql
        or held.url != webhook_url()
        or not _granted(held.account_id)
        or (configured and configured != held.account_id)
    ):
        return "register"
    if held.expires_at is None or held.expires_at - now < REFRESH_WITHIN:
        return "refresh"
    return ""


def keep_webhooks(now: dt.datetime) -> str:
    """The `jira_webhooks` periodic job: queue the one task the webhooks need, if any (and
    none is queued yet). Makes no outbound call itself."""
    if settings.TRACKER_BACKEND != "jira":
        return "not Jira"
    action = plan(state(), now)
    if not action:
        return "fresh"
    queued = OutboundTask.objects.filter(
        name=TASK, state__in=[OutboundTask.State.PENDING, OutboundTask.State.RUNNING]
    ).exists()
    if not queued:
        outbox.enqueue(TASK, {"action": action})
    return action


periodic.register("jira_webhooks", every=dt.timedelta(hours=1))(keep_webhooks)


def admin_account(held: TrackerWebhooks) -> str:
    """Whose grant holds the webhooks: ATLASSIAN_WEBHOOK_ACCOUNT_ID; else the holder so far
    while their grant has the scope; else the Jira administrator who last signed in with it."""
    if settings.ATLASSIAN_WEBHOOK_ACCOUNT_ID:
        return settings.ATLASSIAN_WEBHOOK_ACCOUNT_ID
    if _granted(held.account_id):
        return held.account_id
    tracker = get_tracker()
    for grant in AtlassianGrant.objects.order_by("-updated_at"):
        if SCOPE in grant.scopes.split() and tracker.is_site_admin(grant.account_id):
            return grant.account_id
    return ""


NO_ADMIN = (
    "No Jira administrator has signed in here granting manage:jira-webhook, so the Jira "
    "webhooks cannot be registered: a Jira administrator signs in once at "
    "/accounts/atlassian/login/?grant=webhooks (or set ATLASSIAN_WEBHOOK_ACCOUNT_ID to one "
    "who has)."
)


def _jira() -> JiraTracker:
    """The tracker, which holds webhooks only when it is Jira's."""
    tracker = get_tracker()
    if not isinstance(tracker, JiraTracker):
        raise TrackerError("Only Jira holds webhooks: TRACKER_BACKEND is not jira.")
    return tracker


@outbox.handler(TASK, "Register or refresh the Jira webhooks")
def sync_webhooks(payload: dict[str, Any]) -> None:
    """Register the webhooks again or refresh them, whichever `plan` says now (idempotent:
    a task that runs twice finds nothing left to do the second time)."""
    held = state()
    now = timezone.now()
    action = plan(held, now)
    if not action and payload.get("action") == "refresh" and held.webhook_ids:
        action = "refresh"  # the job saw them expiring: another 30 days does no harm
    if not action:
        return
    tracker = _jira()
    if action == "refresh":
        expires = tracker.refresh_webhooks(held.account_id, held.webhook_ids)
        TrackerWebhooks.objects.filter(pk=held.pk).update(
            expires_at=expires or now + LIFETIME, refreshed_at=now
        )
        return
    account = admin_account(held)
    if not account:
        raise TrackerError(NO_ADMIN)
    if held.webhook_ids and _granted(held.account_id):
        try:
            tracker.delete_webhooks(held.account_id, held.webhook_ids)
        except TrackerError as exc:
            # They expire on their own; the new ones are what matters.
            logger.warning("Jira webhooks %s not deleted: %s", held.webhook_ids, exc)
    jql, url = wanted_jql(), webhook_url()
    ids = tracker.register_webhooks(account, url=url, jql=jql, events=EVENTS) if jql else []
    with transaction.atomic():
        TrackerWebhooks.objects.filter(pk=held.pk).update(
            webhook_ids=ids,
            account_id=account if ids else "",
            url=url if ids else "",
            jql=jql,
            expires_at=now + LIFETIME if ids else None,
            registered_at=now,
            refreshed_at=now,
        )
        audit.record(
            actor_account_id=account,
            kind="tracker.webhooks_registered",
            target_type="trackerWebhooks",
            target_id=held.pk,
            changes={
                "webhookIds": {"before": held.webhook_ids, "after": ids},
                "jql": {"before": held.jql, "after": jql},
            },
        )


# --- receiving -------------------------------------------------------------------------------


# A delivery's token lives minutes (Atlassian's libraries issue 3): one whose `exp` is more
# than this past its `iat` or past now is refused, so a leaked token is not good for years.
MAX_TOKEN_LIFETIME = dt.timedelta(minutes=10)
LEEWAY_SECONDS = 30
# The fixed qsh of Atlassian's context JWTs, which are bound to no request: never a delivery.
CONTEXT_QSH = "context-qsh"


def _encode(value: str) -> str:
    """Percent-encoding as the query string hash asks: RFC 3986's unreserved characters
    stay, everything else (a space as %20, + as %2B, * as %2A) is encoded as UTF-8."""
    return quote(value, safe="-._~")


def canonical_request(method: str, path: str, query: list[tuple[str, str]]) -> str:
    """Atlassian's canonical request: `METHOD&URI&QUERY`. The method in upper case; the URI
    the path alone, "/" when empty, without a trailing "/" unless it is all, "&" encoded as
    %26; the query without its `jwt` parameter, each name and value percent-encoded, sorted
    by name, a name's values sorted and joined by commas, pairs joined by "&"."""
    uri = (path or "/").replace("&", "%26")
    if len(uri) > 1:
        uri = uri.rstrip("/") or "/"
    values: dict[str, list[str]] = {}
    for name, value in query:
        if name != "jwt":
            values.setdefault(_encode(name), []).append(_encode(value))
    canonical_query = "&".join(
        f"{name}={','.join(sorted(values[name]))}" for name in sorted(values)
    )
    return f"{method.upper()}&{uri}&{canonical_query}"


def query_string_hash(method: str, path: str, query: list[tuple[str, str]]) -> str:
    """The `qsh` claim a token for this request carries: the hex SHA-256 of its canonical
    request."""
    return hashlib.sha256(canonical_request(method, path, query).encode("utf-8")).hexdigest()


def verify(authorization: str, request: HttpRequest) -> dict[str, Any] | None:
    """The claims of Jira's bearer JWT when it is signed with the client secret (HS256),
    issued for the client id, unexpired, living at most MAX_TOKEN_LIFETIME, and bound to
    this request by its `qsh` (method, path and query; a context token's fixed qsh is
    refused); None otherwise, the reason logged."""
    scheme, _, token = (authorization or "").partition(" ")
    secret = settings.ATLASSIAN_CLIENT_SECRET
    if scheme.lower() != "bearer" or not token.strip() or not secret:
        return None
    try:
        claims = jwt.decode(
            token.strip(),
            secret,
            algorithms=["HS256"],
            issuer=settings.ATLASSIAN_CLIENT_ID,
            leeway=LEEWAY_SECONDS,
            options={
                "require": ["exp", "iss", "qsh"]
                if settings.ATLASSIAN_WEBHOOK_REQUIRE_QSH
                else ["exp", "iss"],
                "verify_aud": False,
            },
        )
    except jwt.InvalidTokenError as exc:
        logger.warning("Jira webhook refused: %s", exc)
        return None
    problem = _token_problem(claims, request)
    if problem:
        logger.warning("Jira webhook refused: %s", problem)
        return None
    return claims


def _token_problem(claims: dict[str, Any], request: HttpRequest) -> str:
    """Why verified claims are still refused: a lifetime past the cap, or a qsh that is not
    this request's; "" when none."""
    now = time.time()
    longest = MAX_TOKEN_LIFETIME.total_seconds() + LEEWAY_SECONDS
    exp, iat = claims.get("exp"), claims.get("iat")
    if not isinstance(exp, int | float) or exp - now > longest:
        return f"exp is more than {MAX_TOKEN_LIFETIME} ahead"
    if iat is not None and (not isinstance(iat, int | float) or exp - iat > longest):
        return f"exp is more than {MAX_TOKEN_LIFETIME} after iat"
    qsh = claims.get("qsh")
    if qsh is None and not settings.ATLASSIAN_WEBHOOK_REQUIRE_QSH:
        return ""  # the operator accepts tokens without qsh; one that has one is checked
    if not isinstance(qsh, str) or qsh == CONTEXT_QSH:
        return "qsh is not a request's hash"
    query = [(name, value) for name in request.GET for value in request.GET.getlist(name)]
    # The path below the site's own prefix: Atlassian's canonical URI leaves the base out.
    expected = query_string_hash(request.method or "POST", request.path_info, query)
    if not hmac.compare_digest(qsh.encode("utf-8", "surrogatepass"), expected.encode()):
        return "qsh does not match this request (method, path and query)"
    return ""


def _part(data: Any, name: str) -> dict[str, Any]:
    """A member of a signed event that should be an object; anything else reads as empty."""
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _key(value: Any, pattern: re.Pattern[str]) -> str:
    """An issue or project key as Jira writes them, else "" (a signed event is still read as
    data: what no key can be is never written anywhere)."""
    return value if isinstance(value, str) and pattern.fullmatch(value) else ""


def _plain(value: Any, limit: int) -> str:
    """Text of a signed event safe to store: no control character or lone surrogate, capped;
    anything else reads as empty."""
    if not isinstance(value, str) or len(value) > limit or text_error(value):
        return ""
    return value


def _dedupe_key(event: dict[str, Any], identifier: str) -> str:
    """The delivery's identity, as a digest: any text Jira sends fits the column."""
    if identifier:
        raw = f"id:{identifier}"
    else:
        subject = _part(event, "issue").get("id") or _part(event, "project").get("id")
        raw = f"{event.get('webhookEvent')!r}:{event.get('timestamp')!r}:{subject!r}"
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _moved_from(event: dict[str, Any]) -> str:
    """The key an updated issue had before, when the update changed its key (a move)."""
    items = _part(event, "changelog").get("items")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or str(item.get("field") or "").lower() != "key":
            continue
        if old := _key(item.get("fromString"), ISSUE_KEY):
            return old
    return ""


def _project_changed(data: dict[str, Any]) -> None:
    lead = _part(data, "projectLead") or _part(data, "lead")
    mirror = _mirror_named(data)
    key = _key(data.get("key"), PROJECT_KEY)
    if mirror is None or not key or mirror.tracker_id is None:
        return
    sync_project(
        TrackerProject(
            key=key,
            name=_plain(data.get("name"), 255) or mirror.name,
            lead_account_id=_plain(lead.get("accountId"), 128) or mirror.lead_account_id,
            id=mirror.tracker_id,
        ),
        mirror,
    )


def _project_created(data: dict[str, Any]) -> None:
    """A project new in Jira gets its mirror now, not at its lead's next sign-in."""
    lead = _part(data, "projectLead") or _part(data, "lead")
    key = _key(data.get("key"), PROJECT_KEY)
    project_id = data.get("id")
    if isinstance(project_id, bool) or not isinstance(project_id, int | str):
        return
    project_id = str(project_id)
    if not key or not project_id.isascii() or not project_id.isdigit() or len(project_id) > 20:
        return
    sync_project(
        TrackerProject(
            key=key,
            name=_plain(data.get("name"), 255) or key,
            lead_account_id=_plain(lead.get("accountId"), 128),
            id=project_id,
        )
    )


def _mirror_named(data: dict[str, Any]) -> Project | None:
    """The mirror of the project a signed event names by Jira's numeric id."""
    project_id = data.get("id")
    if isinstance(project_id, bool) or not isinstance(project_id, int | str):
        return None
    project_id = str(project_id)
    if not project_id.isascii() or not project_id.isdigit() or len(project_id) > 20:
        return None
    return Project.objects.filter(tracker_id=project_id).first()


def _project_deleted(data: dict[str, Any], at: dt.datetime) -> None:
    mirror = _mirror_named(data)
    if mirror is None or mirror.tracker_deleted_at is not None:
        return
    Project.objects.filter(pk=mirror.pk).update(tracker_deleted_at=at)
    deleted = {"trackerDeletedAt": {"before": None, "after": at.isoformat()}}
    audit.record_in(mirror, "", "project.deleted_in_tracker", "project", mirror.pk, deleted)


def record(event: dict[str, Any], *, identifier: str = "") -> str:
    """Apply one verified event once. Returns what happened ("duplicate" for a delivery
    already applied)."""
    name = _plain(event.get("webhookEvent"), 64)
    issue = _part(event, "issue")
    with transaction.atomic():
        try:
            with transaction.atomic():
                TrackerEventReceipt.objects.create(
                    dedupe_key=_dedupe_key(event, identifier), event=name[:64]
                )
        except IntegrityError:
            return "duplicate"
        if name == "jira:issue_deleted" and (key := _key(issue.get("key"), ISSUE_KEY)):
            signals.tracker_issue_gone.send(sender=None, issue_key=key, reason="deleted")
        elif name == "jira:issue_updated" and (old := _moved_from(event)):
            signals.tracker_issue_gone.send(
                sender=None,
                issue_key=old,
                reason=f"moved to {_key(issue.get('key'), ISSUE_KEY) or '?'}",
            )
        elif name == "project_created":
            _project_created(_part(event, "project"))
        elif name == "project_updated":
            _project_changed(_part(event, "project"))
        elif name == "project_deleted":
            _project_deleted(_part(event, "project"), timezone.now())
    return name or "ignored"


def _refused(message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": "unauthenticated", "message": message}}, status=401)


@csrf_exempt
@page("POST", login=False)
def receive(request: HttpRequest) -> HttpResponse:
    """POST /hooks/jira/: Jira's dynamic webhooks. 401, nothing stored, unless the bearer
    JWT verifies; 204 once applied (or already applied)."""
    if verify(request.headers.get("Authorization", ""), request) is None:
        return _refused("A Jira webhook signed with this app's client secret is expected.")
    message = "The body must be a JSON object."
    try:
        event = cleaning.json_loads(request.body or b"{}", what="The body")
    except cleaning.JsonRefused as exc:
        event, message = None, str(exc)
    except ValueError:
        event = None
    if not isinstance(event, dict):
        return JsonResponse({"error": {"code": "bad_request", "message": message}}, status=400)
    outcome = record(event, identifier=request.headers.get(IDENTIFIER_HEADER, ""))
    # The event's own text is logged only when plain (a lone surrogate breaks log handlers).
    logger.info("Jira webhook %s: %s", _plain(event.get("webhookEvent"), 64) or "-", outcome)
    return HttpResponse(status=204)
