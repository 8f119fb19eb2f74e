"""The stage plan as the portfolio reads it, many projects at once in a fixed number of
queries (never one per project): each project's current stage and how long its undecided
gate review has waited (`gates.selectors.days_at_gate`, the same count), and the portfolio's
stage filter as SQL over its stored rows."""

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from gates.models import DefaultStage, GateReview, Stage

# The portfolio's stage filter: a stage's name, or every project whose gate review waits.
AT_GATE = "atGate"


def stage_columns(
    project_ids: Iterable[Any], now: dt.datetime | None = None
) -> dict[Any, dict[str, Any]]:
    """{project id: {"currentStage": name, "daysAtGate": days or None}} for the projects with
    a stage under way: one query, always."""
    ids = list(project_ids)
    # One query even for an empty page: the portfolio's count never depends on what matched.
    which = Q(project_id__in=ids) if ids else Q(pk__isnull=True)
    today = timezone.localdate(now or timezone.now())
    waiting = GateReview.objects.filter(stage=OuterRef("pk"), state="Requested").values(
        "requested_at"
    )[:1]
    found: dict[Any, dict[str, Any]] = {}
    for project_id, name, requested in (
        Stage.objects.filter(which, state="Current")
        .annotate(waiting_since=Subquery(waiting))
        .values_list("project_id", "name", "waiting_since")
    ):
        days = None if requested is None else (today - timezone.localdate(requested)).days
        found[project_id] = {"currentStage": name, "daysAtGate": days}
    return found


def stage_where(stage: str, prefix: str = "project__") -> Q:
    """The stage filter over rows reaching the project through `prefix`: AT_GATE (a gate
    review awaits the sponsor), else the current stage's name (any case)."""
    if not stage:
        return Q()
    if stage == AT_GATE:
        return Q(
            **{
                f"{prefix}pk__in": GateReview.objects.filter(state="Requested").values(
                    "stage__project_id"
                )
            }
        )
    return Q(
        **{
            f"{prefix}pk__in": Stage.objects.filter(state="Current", name__iexact=stage).values(
                "project_id"
            )
        }
    )


def stage_choices(shown: Iterable[str | None]) -> list[str]:
    """The stage filter's choices: the site's default stage names and the stages under way on
    the rows shown (`shown`): one query."""
    names = set(DefaultStage.objects.values_list("name", flat=True))
    names |= {name for name in shown if name and name != AT_GATE}
    return sorted(names, key=str.lower)
