"""The steering pack: what a board reads of a status report on one or two pages, beside the
status itself (its RAG cards, figures and earned value, `status_to_dict`): the top risks with
their inherent and residual scores, the next ends of the work, the late packages, the
decisions pending, the changes and the RAG moves since the last published report, and the
actual cost recorded. Publishing freezes it into the report's snapshot (`snapshot["pack"]`), so
a past pack reads as it was; a draft's pack is read live. JSON-ready, in the API's camelCase."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Q
from django.utils import timezone

from governance import signals
from governance.audit import jsonable
from governance.rag import risk_zone
from registers.derive import measured_end, residual_score
from registers.models import ChangeRequest, Decision
from status import derive
from status.models import DIMENSIONS, StatusReport

TOP = 5  # rows of each list the pack shows; the counts say how many there are in all
# The pack's own print stylesheet (the PDF): a few rules, no web fonts; WeasyPrint lays the
# page out in a fraction of the time the app's stylesheet takes.
STYLESHEET = "css/pack.css"
# The earned-value figures the pack shows (the status page shows them all, with readings).
EARNED_FIGURES = ("bac", "pv", "ev", "ac", "cpi", "spi")


def key_messages(report_text: str | None, status: dict[str, Any]) -> dict[str, str]:
    """The key messages the pack shows, once: the report's own, else the status's as a new
    draft takes them (`services.default_key_messages`: the commentary's key messages, else the
    steering key message, pmKeyMessage); `source` says which."""
    commentary = status.get("structuredCommentary") or {}
    for text, source in (
        (report_text, "this report"),
        (commentary.get("keyMessages"), "the status commentary"),
        (status.get("pmKeyMessage"), "the status's steering key message"),
    ):
        if text and str(text).strip():
            return {"text": str(text).strip(), "source": source}
    return {"text": "", "source": ""}


def previous_report(project: Any, before: dt.datetime | None = None) -> StatusReport | None:
    """The project's last published report (before `before`, when given)."""
    reports = StatusReport.objects.filter(project=project, state="Published")
    if before is not None:
        reports = reports.filter(published_at__lt=before)
    return reports.order_by("-published_at").first()


def _risks(view: derive.StatusView) -> list[dict[str, Any]]:
    """The open risks with the highest judged score (residual where assessed, else inherent),
    each with both scores; unscored ones last."""
    risks = [r for r in view.facts.risks if derive.is_open_risk(r)]
    risks.sort(key=lambda r: (-(derive.score(r) or -1), r.title))
    rows = []
    for r in risks[:TOP]:
        residual = residual_score(r)
        rows.append(
            {
                "id": r.id,
                "title": r.title,
                "inherentScore": derive.inherent_score(r),
                "residualScore": residual,
                "zone": risk_zone(derive.score(r), view.thresholds),
                "materialised": r.materialised,
            }
        )
    return rows


def _milestones(view: derive.StatusView, today: dt.date) -> list[dict[str, Any]]:
    """The next ends of the work still open, soonest first: a package's forecast end, else its
    planned end, from today on."""
    upcoming = []
    for wp in view.facts.work_packages:
        if wp.status == "Complete" or wp.actual_end_date:
            continue
        end = measured_end(wp)
        if end is None or end < today:
            continue
        upcoming.append(
            {
                "name": wp.name,
                "type": wp.type or "",
                "end": end,
                "endSource": "forecast" if wp.forecast_end_date else "planned",
            }
        )
    upcoming.sort(key=lambda m: (m["end"], m["name"]))
    return upcoming[:TOP]


def _late(view: derive.StatusView) -> list[dict[str, Any]]:
    return [
        {
            "name": s.name,
            "slipDays": s.days,
            "end": s.end,
            "endSource": s.source,
            "baselineEnd": s.baseline_end,
        }
        for s in view.facts.figures.late_packages[:TOP]
    ]


def _decisions(project: Any) -> list[dict[str, Any]]:
    """The decisions still pending (no madeOn), the oldest first; the count is the status's
    own (`figures.pendingDecisions`)."""
    pending = Decision.objects.filter(project=project, made_on__isnull=True)
    return [
        {"decision": d.decision, "ownerAccountId": d.owner_account_id}
        for d in pending.order_by("created_at", "decision").only("decision", "owner_account_id")[
            :TOP
        ]
    ]


def _changes(project: Any, since: dt.datetime | None) -> tuple[list[dict[str, Any]], int]:
    """The change requests raised or decided since the last report (every one for a first
    report), the latest first."""
    changes = ChangeRequest.objects.filter(project=project)
    if since is not None:
        changes = changes.filter(Q(created_at__gt=since) | Q(decided_at__gt=since))
    rows = [
        {
            "summary": c.summary,
            "status": c.status,
            "impactBudget": c.impact_budget,
            "impactScheduleDays": c.impact_schedule_days,
            "decided": c.decided_at is not None and (since is None or c.decided_at > since),
        }
        for c in changes.order_by("-created_at")[:TOP]
    ]
    return rows, changes.count()


def _rag_moves(now: dict[str, Any], before: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each RAG that moved since the last report: overall, then the four dimensions."""
    if before is None:
        return []
    pairs = [("Overall", before.get("overallRag"), now.get("overallRag"))]
    for key in DIMENSIONS:
        pairs.append(
            (
                derive.DIMENSION_LABELS[key],
                (before.get("effective") or {}).get(f"{key}Rag"),
                (now.get("effective") or {}).get(f"{key}Rag"),
            )
        )
    return [
        {"label": label, "from": old or "None", "to": new or "None"}
        for label, old, new in pairs
        if (old or "None") != (new or "None")
    ]


def pack_of(
    view: derive.StatusView,
    status: dict[str, Any],
    *,
    previous: StatusReport | None,
) -> dict[str, Any]:
    """The pack of `view` (its status as `status`), against the last published report."""
    project = view.facts.project
    today = timezone.localdate(view.now)
    since = previous.published_at if previous is not None else None
    changes, changed = _changes(project, since)
    before = ((previous.snapshot or {}).get("status") or None) if previous is not None else None
    pack: dict[str, Any] = jsonable(
        {
            "topRisks": _risks(view),
            "nextMilestones": _milestones(view, today),
            "lateWorkPackages": _late(view),
            "openDecisions": _decisions(project),
            "changesSince": since,
            "previousReportTitle": previous.title if previous is not None else None,
            "changes": changes,
            "changeCount": changed,
            "ragMoves": _rag_moves(status, before),
            "actualCostRecorded": derive.actual_cost_recorded(view.facts),
            **sections(project, view),
        }
    )
    return pack


def sections(project: Any, view: derive.StatusView) -> dict[str, Any]:
    """The sections the apps above add to the pack (`signals.steering_pack`)."""
    found: dict[str, Any] = {}
    for _receiver, answer in signals.steering_pack.send(sender=None, project=project, view=view):
        if isinstance(answer, dict):
            found.update(answer)
    return found
