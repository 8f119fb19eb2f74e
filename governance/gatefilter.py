"""The access gate as a filter in a list's SQL: the conditions that `governance.gatelist`
joins with the view rule (written once, `permissions.view_rule`), over governance project rows
or over the rows of a model that reaches its project through a path ("project__",
`gatelist.condition`), so that a list (the portfolio, the project list, their APIs) filters,
sorts and cuts its page in SQL and only the page's rows get their role computed.

The tracker's part is the gate statement's own expression (`gate_t_browse` of the tracker's
`gate_expressions`, `governance.gatesql`): a list asks the same question as a project's page.
A tracker without one (Jira: its listing comes from Jira or Jira's cache) has no condition
here; the gate lists its projects the long way and the list filters by their ids."""

from collections.abc import Collection, Sequence
from typing import Any

from django.db.models import F, OuterRef, Q, QuerySet, Subquery, Value

from governance.models import EditorNomination, Project
from governance.sql import AnyOf, ListHolds

# The tracker's answers a page's rows carry (the tracker's name and lead of the moment).
TRACKER_NAMES = ("gate_t_name", "gate_t_lead")


def browse_condition(
    account_id: str, tracker: Any, path: str = "", *, every: bool = True
) -> Q | None:
    """Whether the person browses the project in the tracker, as SQL (the gate statement's
    `gate_t_browse`), or None when the tracker answers only from its listing. `path`: the
    rows filtered reach the project through it (`gatelist.condition`). `every`: the statement
    reads every project (a count, a summary); else it walks a page in the project's order (the
    tracker asks each project's grant instead of hashing all of them)."""
    expressions = getattr(tracker, "gate_expressions", None)
    if expressions is None:
        return None
    browse = expressions(account_id, Value(""), key=f"{path}key", every=every).get("gate_t_browse")
    return None if browse is None else Q(browse)


def lead_condition(account_id: str, tracker: Any) -> Q | None:
    """Whether the person leads the project in the tracker of the moment (the gate's
    `gate_t_lead` equal to them), as one sub-select of the keys they lead instead of the lead
    read row by row; None for a tracker that answers only from its listing."""
    led = getattr(tracker, "gate_led_keys", None)
    return None if led is None else Q(key__in=led(account_id))


def steering_condition(account_id: str, path: str = "") -> Q:
    """Whether the person sits on the project's steering committee, as SQL."""
    return Q(ListHolds(F(f"{path}steering_account_ids"), account_id))


def one_of(ids: Collection[int], path: str = "") -> Q:
    """The projects among `ids` (a listing the gate made the long way), or the rows whose
    project (through `path`) is among them."""
    return Q(AnyOf(F(f"{path}pk"), list(ids))) if ids else Q(**{f"{path}pk__in": []})


def nominated_condition(account_id: str) -> Q:
    """Whether the person is a nominated editor of the project, as SQL."""
    return Q(pk__in=EditorNomination.objects.filter(account_id=account_id).values("project_id"))


def with_tracker_answers(
    projects: QuerySet[Project], account_id: str, tracker: Any
) -> QuerySet[Project]:
    """The projects with the tracker's name and lead of the moment (`TRACKER_NAMES`, the gate
    statement's own expressions), read for the rows a page returns only."""
    expressions = getattr(tracker, "gate_expressions", None)
    if expressions is None:
        return projects
    answers = expressions(account_id, Value(""))
    if not all(name in answers for name in TRACKER_NAMES):
        return projects
    return projects.annotate(**{name: answers[name] for name in TRACKER_NAMES})


def tracker_answers_of(account_id: str, tracker: Any, project: str) -> dict[str, Any]:
    """The tracker's name and lead of the moment (`TRACKER_NAMES`) of the project another
    model's row names (`project`: its project id's field), as sub-selects over the gate
    statement's own expressions: for the rows a page returns. Empty for a tracker without
    them."""
    expressions = getattr(tracker, "gate_expressions", None)
    if expressions is None:
        return {}
    answers = expressions(account_id, Value(""))
    if not all(name in answers for name in TRACKER_NAMES):
        return {}
    # By its primary key alone (no model ordering): ordered by key, PostgreSQL walked the key
    # index to find each row's project (fifty rows read a page row at 10,000 projects).
    of = Project.objects.filter(pk=OuterRef(project)).order_by()
    return {
        name: Subquery(of.annotate(gate_value=answers[name]).values("gate_value")[:1])
        for name in TRACKER_NAMES
    }


def nominations(account_id: str, projects: Sequence[Project]) -> set[int]:
    """The ids of the projects among `projects` the person is a nominated editor of (one
    query)."""
    ids = [project.pk for project in projects]
    if not ids:
        return set()
    return set(
        EditorNomination.objects.filter(
            AnyOf(F("project_id"), ids), account_id=account_id
        ).values_list("project_id", flat=True)
    )
