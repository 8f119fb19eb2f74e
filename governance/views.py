"""Kernel pages: editor nominations, audit, profile (tokens), notifications; the project tab
shell (`project_context`). My projects and the overview are status/overview.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.models import Project
    from governance.permissions import Caller


import datetime as dt
import uuid
from collections.abc import Mapping

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone

from governance import (
    audit_text,
    notifications,
    oauth,
    permissions,
    roster,
    services,
)
from governance.errors import NotFound, ValidationFailed
from governance.http import HtmxHttpRequest, page, render_htmx, uncompressed
from governance.models import (
    NOTIFICATION_KINDS,
    ApiToken,
    AuditEntry,
    Notification,
    NotificationOptOut,
)
from governance.people import PEOPLE_SEARCH_DOWN, resolve, search_browsers
from governance.tracker import TrackerError


def project_context(project: Project, caller: Caller, **extra: Any) -> dict[str, Any]:
    """What every project page (the tab shell) needs."""
    return {"project": project, "caller": caller, **extra}


def _editors_context(
    request: HtmxHttpRequest,
    project: Project,
    caller: Caller,
    *,
    query: str = "",
    errors: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    editor_ids = services.editor_account_ids(project)
    results = []
    search_error = ""
    if query:
        try:
            found = search_browsers(project.key, query, limit=10)
        except TrackerError:
            found = []
            search_error = PEOPLE_SEARCH_DOWN
        results = [
            u
            for u in found
            if u.account_id not in editor_ids and u.account_id != project.lead_account_id
        ]
    people = resolve([project.lead_account_id, *editor_ids])
    return project_context(
        project,
        caller,
        tab="overview",
        editor_ids=editor_ids,
        people=people,
        query=query,
        results=results,
        words=roster.words_of(results),
        search_error=search_error,
        errors=errors or {},
    )


@page("GET", "POST")
def project_editors(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The Project Lead nominates and removes editors (search, add, remove)."""
    project, caller = permissions.lead_project_for(request, key)
    template = "governance/project_editors.html"
    if request.method == "GET":
        context = _editors_context(request, project, caller, query=request.GET.get("q", "").strip())
        return render_htmx(request, template, context, partial="editors-panel")
    account_id = request.POST.get("account_id", "").strip()
    action = request.POST.get("action")
    try:
        if action == "add":
            services.editor_add(caller=caller, account_id=account_id)
            done = "added"
        elif action == "remove":
            services.editor_remove(caller=caller, account_id=account_id)
            done = "removed"
        else:
            raise ValidationFailed({"action": ["Choose add or remove."]})
    except ValidationFailed as exc:
        context = _editors_context(request, project, caller, errors=exc.fields)
        return render_htmx(request, template, context, partial="editors-panel", status=422)
    name = resolve([account_id])[account_id.strip()].display_name
    if request.htmx:
        context = _editors_context(request, project, caller)
        context["notice"] = f"{name} {done} as an editor."
        return render_htmx(request, template, context, partial="editors-panel")
    messages.success(request, f"{name} {done} as an editor.")
    return redirect(reverse("project-editors", args=[project.key]))


AUDIT_PAGE_SIZE = 50


@page("GET")
def project_audit(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The project's audit log as sentences with names, newest first, 50 a page; filtered by
    person, kind and date; each entry's stored form behind a "details" toggle."""
    project, caller = permissions.project_for(request, key)
    entries = AuditEntry.objects.filter(project_key__in=[project.key, *project.former_keys])
    kinds = sorted(set(entries.order_by().values_list("kind", flat=True).distinct()))
    actor_ids = sorted(
        set(entries.order_by().values_list("actor_account_id", flat=True).distinct()) - {""}
    )
    kind = request.GET.get("kind", "")
    actor = request.GET.get("actor", "")
    since, until = _day(request.GET.get("from")), _day(request.GET.get("to"))
    if kind:
        entries = entries.filter(kind=kind)
    if actor:
        entries = entries.filter(actor_account_id=actor)
    if since:
        entries = entries.filter(at__date__gte=since)
    if until:
        entries = entries.filter(at__date__lte=until)
    paginator = Paginator(entries, AUDIT_PAGE_SIZE)
    page_obj = paginator.get_page(request.GET.get("page"))
    lines = audit_text.describe(list(page_obj.object_list))
    people = resolve(actor_ids)
    return render_htmx(
        request,
        "governance/project_audit.html",
        project_context(
            project,
            caller,
            tab="audit",
            page_obj=page_obj,
            lines=lines,
            kinds=sorted(((k, audit_text.kind_label(k)) for k in kinds), key=lambda pair: pair[1]),
            actors=sorted(
                ((a, people[a].display_name if a in people else a) for a in actor_ids),
                key=lambda pair: pair[1].casefold(),
            ),
            kind=kind,
            actor=actor,
            since=since.isoformat() if since else "",
            until=until.isoformat() if until else "",
            filtered=bool(kind or actor or since or until),
            people=people,
        ),
        partial="audit-table",
    )


def _day(raw: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


@page("GET", "POST")
@uncompressed
def profile(request: HtmxHttpRequest) -> HttpResponse:
    """The signed-in person's profile: API tokens (create, list, revoke)."""
    new_token = None
    errors = {}
    status = 200
    if request.method == "POST":
        try:
            _, new_token = services.token_create(
                user=permissions.request_user(request), name=request.POST.get("name", "")
            )
            status = 201
        except ValidationFailed as exc:
            errors = exc.fields
            status = 422
    user = permissions.request_user(request)
    tokens = ApiToken.objects.filter(user=user)
    person = resolve([user.account_id]).get(user.account_id)
    return render(
        request,
        "governance/profile.html",
        {
            "tokens": tokens,
            "new_token": new_token,
            "errors": errors,
            "person": person,
            "clients": oauth.connected_clients(permissions.request_user(request)),
        },
        status=status,
    )


@page("POST")
def token_revoke(request: HtmxHttpRequest, token_id: int) -> HttpResponse:
    token = services.token_revoke(user=permissions.request_user(request), token_id=token_id)
    messages.success(request, f"Token “{token.name}” revoked.")
    return redirect("profile")


@page("POST")
def client_revoke(request: HtmxHttpRequest, application_id: int) -> HttpResponse:
    """Disconnect an MCP client (OAuth) from the signed-in person."""
    name = oauth.client_revoke(
        user=permissions.request_user(request), application_id=application_id
    )
    messages.success(request, f"“{name}” is disconnected; it must ask you again to connect.")
    return redirect("profile")


@page("GET", login=False)
def healthz(request: HtmxHttpRequest) -> HttpResponse:
    """Liveness: the process answers. Asks nothing of the database or the cache, so an
    outage of either never has a healthy worker restarted."""
    return HttpResponse("ok", content_type="text/plain")


@page("GET", login=False)
def readyz(request: HtmxHttpRequest) -> JsonResponse:
    """Readiness: 200 when the database answers (the cache may be down: the app then answers
    from the database), 503 when it does not. The body says what each dependency answered,
    the outbox's backlog and how long its oldest pending task has waited."""
    from django.db import DatabaseError
    from django.db.models import Count, Min, Q

    from governance.cache import cache_status
    from governance.models import OutboundTask

    body: dict[str, Any] = {"database": "ok", "cache": cache_status()}
    try:
        waiting = Q(state__in=[OutboundTask.State.PENDING, OutboundTask.State.RUNNING])
        backlog = OutboundTask.objects.aggregate(
            pending=Count("pk", filter=waiting),
            dead=Count("pk", filter=Q(state=OutboundTask.State.DEAD)),
            oldest=Min("created_at", filter=waiting),
        )
    except DatabaseError:
        body["database"] = "down"
        body["outbox"] = None
        response = JsonResponse(body, status=503)
        response["Retry-After"] = "5"
        response["Cache-Control"] = "no-store"
        return response
    oldest = backlog["oldest"]
    body["outbox"] = {
        "pending": backlog["pending"],
        "dead": backlog["dead"],
        "oldestPendingSeconds": (
            round((timezone.now() - oldest).total_seconds(), 1) if oldest else None
        ),
    }
    response = JsonResponse(body)
    response["Cache-Control"] = "no-store"
    return response


@page("GET")
def wiki_page(request: HtmxHttpRequest, page_id: str) -> HttpResponse:
    """A page of the built-in wiki (local backend only), so supporting links work on a laptop.
    A page made for a project is read by those who can view that project; a page of no
    project by site admins; anyone else is told there is no such page (404)."""
    from governance.wiki.local.models import LocalWikiPage

    wiki_page = LocalWikiPage.objects.filter(pk=page_id).prefetch_related("comments").first()
    if wiki_page is None:
        raise NotFound()
    if wiki_page.project_key:
        try:
            permissions.project_for(request, wiki_page.project_key)
        except NotFound:
            raise NotFound() from None  # not even which project the page belongs to
    elif not permissions.is_site_admin(permissions.request_user(request), request):
        raise NotFound()
    return render(request, "governance/wiki_page.html", {"page": wiki_page})


@page("GET")
def outbox_tasks(request: HtmxHttpRequest) -> HttpResponse:
    """Site admins: outbound calls that failed (dead, or waiting for their next retry), with
    their last error and a retry button."""
    permissions.require_site_admin(request)
    from governance import outbox

    tasks = [(task, outbox.task_label(task.name)) for task in outbox.failing_tasks()]
    return render(request, "governance/outbox.html", {"tasks": tasks, "section": "settings"})


@page("POST")
def outbox_retry(request: HtmxHttpRequest, task_id: uuid.UUID) -> HttpResponse:
    user = permissions.require_site_admin(request)
    from governance import outbox

    outbox.retry(task_id, actor_account_id=user.account_id)
    messages.success(request, "The task is queued again and runs in a moment.")
    return redirect("outbox-tasks")


@page("GET", "POST")
def notification_list(request: HtmxHttpRequest) -> HttpResponse:
    """The signed-in person's notifications, newest first (50 a page), unread ones marked;
    POST marks them all read. Below: which kinds they receive."""
    me = permissions.request_user(request).account_id
    if request.method == "POST":
        count = notifications.mark_read(me)
        messages.success(request, f"{count} notification{pluralize(count)} marked as read.")
        return redirect("notifications")
    rows = Notification.objects.filter(recipient_account_id=me)
    paginator = Paginator(rows, 50)
    page_obj = paginator.get_page(request.GET.get("page"))
    off = set(NotificationOptOut.objects.filter(account_id=me).values_list("kind", flat=True))
    return render(
        request,
        "governance/notifications.html",
        {
            "page_obj": page_obj,
            "kinds": [(k, label, k not in off) for k, label in NOTIFICATION_KINDS.items()],
            "section": "notifications",
        },
    )


@page("POST")
def notification_settings(request: HtmxHttpRequest) -> HttpResponse:
    """Turn kinds of notification on or off for the signed-in person."""
    wanted = set(request.POST.getlist("kinds"))
    notifications.set_opt_outs(
        permissions.request_user(request).account_id, set(NOTIFICATION_KINDS) - wanted
    )
    messages.success(request, "Notification settings saved.")
    return redirect("notifications")
