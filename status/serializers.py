"""Project status and status reports as the API represents them (the spec's camelCase names,
the derived read-only fields included). Published reports store exactly this shape, so a past
report renders as it was."""

from typing import Any

from governance import specs
from governance.audit import jsonable
from status import derive
from status.derive import DIMENSION_LABELS, StatusView
from status.models import DIMENSIONS, ProjectStatus, StatusReport
from status.specs import StatusSpec


def stored_fields(status: ProjectStatus) -> dict[str, Any]:
    """The spec's stored fields (status.specs), with the read-time fallbacks (confidence
    Unknown, overrides outside the enum null)."""
    stored = specs.snapshot(StatusSpec, status)
    for key in DIMENSIONS:
        stored[f"{key}RagOverride"] = derive.override(status, key)
    stored["outcomeConfidence"] = derive.confidence(status.outcome_confidence)
    stored["adoptionConfidence"] = derive.confidence(status.adoption_confidence)
    return {
        "projectKey": status.project.key,
        **stored,
        "lastUpdatedAt": status.last_updated_at,
        "lastUpdatedByAccountId": status.last_updated_by_account_id or None,
        "initiationStartedAt": status.initiation_started_at,
        "initiationCompletedAt": status.initiation_completed_at,
        "initiationDismissals": dict(status.initiation_dismissals or {}),
    }


def status_to_dict(view: StatusView) -> dict[str, Any]:
    """GET /projects/{key}/status: stored fields, then the fields StatusSpec declares derived
    (`derived`, `effective`, `drivers`, `stale`...), each read from the view. JSON-ready."""
    body: dict[str, Any] = jsonable(
        {**stored_fields(view.status), **specs.derived_values(StatusSpec, view)}
    )
    return body


def earned_value_body(view: StatusView) -> dict[str, Any] | None:
    """The project's earned value as answered (`StatusView.earned_value_body`)."""
    return view.earned_value_body


def report_summary(report: StatusReport) -> dict[str, Any]:
    """A report in a list: who, when, and the RAGs it froze (for the trend)."""
    snapshot = report.snapshot or {}
    status = snapshot.get("status") or {}
    summary: dict[str, Any] = jsonable(
        {
            "id": str(report.pk),
            "projectKey": report.project.key,
            "title": report.title,
            "state": report.state,
            "createdAt": report.created_at,
            "createdByAccountId": report.created_by_account_id or None,
            "updatedAt": report.updated_at,
            "publishedAt": report.published_at,
            "publishedByAccountId": report.published_by_account_id,
            "overallRag": status.get("overallRag"),
            "effective": status.get("effective"),
            "revision": report.revision,
        }
    )
    return summary


def report_to_dict(report: StatusReport) -> dict[str, Any]:
    body = report_summary(report)
    body["keyMessages"] = report.key_messages
    body["snapshot"] = report.snapshot
    return body


def dimension_cards(status: dict[str, Any]) -> list[dict[str, Any]]:
    """The four dimension cards of a status representation (live or from a snapshot)."""
    cards = []
    for key in DIMENSIONS:
        rag_key = f"{key}Rag"
        drivers = (status.get("drivers") or {}).get(rag_key) or {}
        cards.append(
            {
                "key": key,
                "label": DIMENSION_LABELS[key],
                "derived": (status.get("derived") or {}).get(rag_key) or "None",
                "override": status.get(f"{key}RagOverride"),
                "effective": (status.get("effective") or {}).get(rag_key) or "None",
                "reason": status.get(f"{key}RagOverrideReason", ""),
                "summary": drivers.get("summary", ""),
                "drivers": drivers.get("drivers") or [],
            }
        )
    return cards
