"""The registers' read rows are written in Python (registers.views.rows); the row partials the
templates had are kept here, under `row_oracle/`, only to be compared with: for each register,
varied rows (empty values, long and hostile text, unicode, dates, amounts, links, closed and
deleted-looking states, with and without phasing) as each role sees them, and each answer's
own words (saved, a notice, the moved row, the bulk bar's ticks, the link picker), drawn both
ways must be the same bytes."""

import datetime as dt
import itertools
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.template import Context, Engine
from django.test import RequestFactory
from django.utils import timezone

from governance.permissions import caller_for
from registers.views.base import REGISTERS
from registers.views.rows import ROWS, RowContext
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    WorkPackageFactory,
)

ORACLE = Path(__file__).resolve().parent / "row_oracle"
TEMPLATES = {
    "work-packages": "wp_row.html",
    "risks": "risk_row.html",
    "decisions": "decision_row.html",
    "changes": "change_row.html",
}
HOSTILE = "<script>alert(\"x\")</script> & 'quoted' “curly” Ünïcode ☃ 漢字"
LONG = "A long text that goes on " * 12 + "<b>and ends</b>"
LONG_NAME = "Long 'name' <i>x</i> " * 9  # within a name field's 200 characters


@pytest.fixture
def engine():
    return Engine(
        dirs=[str(ORACLE)],
        app_dirs=True,
        libraries={"gov": "governance.templatetags.gov"},
    )


def _records(cast):
    project, lead = cast.project, cast.lead
    wp_plain = WorkPackageFactory(
        project=project, name="Plain", planned_start_date=None, planned_end_date=None, budget=None
    )
    wp_full = WorkPackageFactory(
        project=project,
        name=HOSTILE,
        type=LONG_NAME,
        owner_account_id=lead.account_id,
        status="In Progress",
        progress=0,
        rag="Red",
        forecast_start_date=dt.date(2026, 2, 1),
        forecast_end_date=dt.date(2026, 8, 15),
        budget=Decimal("1234567.89"),
        budget_forecast=Decimal("-5.50"),
        budget_actual=Decimal("0"),
        budget_phasing=[{"period": "2026-01", "amount": "500"}],
        linked_issue_keys=["ALPHA-1", '<b>"K"</b>'],
    )
    wp_early = WorkPackageFactory(
        project=project,
        name="Early & done",
        owner_account_id="someone-unknown",
        status="Complete",
        progress=100,
        rag="Green",
        forecast_end_date=dt.date(2026, 5, 1),
        linked_issue_keys=[],
    )
    risk_plain = RiskFactory(project=project, title="Plain", impact=None, likelihood=None)
    risk_full = RiskFactory(
        project=project,
        title=HOSTILE,
        description=LONG,
        owner_account_id=lead.account_id,
        direction="Risk",
        materialised=True,
        impact=5,
        likelihood=4,
        residual_impact=2,
        residual_likelihood=1,
        treatment="Accept",
        accepted_at=timezone.now(),
        accepted_by_account_id=lead.account_id,
        mitigation=LONG,
        imported=True,
    )
    risk_closed = RiskFactory(
        project=project,
        title="Closed <one>",
        direction="Opportunity",
        status="Closed",
        treatment="Pursue",
        mitigation="Short",
        accepted_by_account_id="ghost",
    )
    risk_untreated = RiskFactory(project=project, title="Happened", materialised=True)
    DecisionFactory(project=project, decision="Treats it", treated_risk_id=str(risk_full.pk))
    DecisionFactory(project=project, decision="<Also> treats", treated_risk_id=str(risk_full.pk))
    decision_plain = DecisionFactory(project=project, decision="Pending")
    decision_full = DecisionFactory(
        project=project,
        decision=HOSTILE,
        made_on=dt.date(2026, 3, 4),
        made_by_account_id=lead.account_id,
        rationale=LONG,
        minutes_ref={"title": "Minutes <3> & “more”", "url": 'https://example.org/?a=1&b="2"'},
        notes=[{"text": "n", "authorAccountId": lead.account_id, "at": "2026-03-04T10:00:00Z"}],
        treated_risk_id=str(risk_untreated.pk),
        imported=True,
    )
    decision_notes = DecisionFactory(
        project=project,
        decision="Two notes",
        made_on=dt.date(2026, 1, 2),
        made_by_account_id="ghost",
        minutes_ref={"title": "Unlinked minutes", "url": "javascript:alert(1)"},
        notes=[{"text": "a"}, {"text": "b"}],
    )
    decision_untitled = DecisionFactory(project=project, decision="Untitled", minutes_ref={"x": 1})
    change_plain = ChangeRequestFactory(project=project, summary="Plain")
    change_full = ChangeRequestFactory(
        project=project,
        summary=HOSTILE,
        reason=LONG,
        dimensions=["Budget", "Schedule"],
        dimensions_chosen=False,
        impact_budget=Decimal("-2500.00"),
        impact_schedule_days=12,
        target_work_package_id=wp_full.pk,
        proposer_account_id=lead.account_id,
        approver_seat={"displayName": "<External> “Board”", "email": "b@example.org"},
        imported=True,
    )
    change_decided = ChangeRequestFactory(
        project=project,
        summary="Decided",
        dimensions=["Scope"],
        dimensions_chosen=True,
        impact_budget=Decimal("100"),
        impact_schedule_days=-3,
        target_work_package_id=wp_plain.pk,
        status="Approved",
        decided_at=timezone.now(),
        decided_by_account_id=cast.sponsor.account_id,
        approver_account_id=cast.sponsor.account_id,
        proposer_account_id="ghost",
    )
    change_withdrawn = ChangeRequestFactory(
        project=project,
        summary="Withdrawn one",
        status="Withdrawn",
        proposer_account_id=cast.editor.account_id,
        approver_account_id="ghost",
    )
    change_rejected = ChangeRequestFactory(
        project=project, summary="Rejected", status="Rejected", decided_at=timezone.now()
    )
    return {
        "work-packages": [wp_plain, wp_full, wp_early],
        "risks": [risk_plain, risk_full, risk_closed, risk_untreated],
        "decisions": [decision_plain, decision_full, decision_notes, decision_untitled],
        "changes": [change_plain, change_full, change_decided, change_withdrawn, change_rejected],
    }


# The answers' own words beside a row (none: the page's row).
ANSWERS = [
    {},
    {"saved": True},
    {"notice": "Not deleted: someone changed this <row> since you loaded it."},
    {"saved": True, "notice": "Both"},
]


def _schedules():
    """The schedule notes a package's Forecast end cell shows (a re-plan, no baseline)."""
    return [
        None,
        SimpleNamespace(replanned=True, basis="baseline"),
        SimpleNamespace(replanned=False, basis="noBaseline"),
    ]


@pytest.mark.parametrize("slug", ["work-packages", "risks", "decisions", "changes"])
@pytest.mark.parametrize("role", ["lead", "editor", "viewer", "sponsor"])
def test_a_row_written_in_python_is_the_template_s_row(cast, engine, slug, role):
    records = _records(cast)[slug]
    pages = REGISTERS[slug]
    project = cast.project
    caller = caller_for(getattr(cast, role), project)
    model = type(records[0])
    read = {r.pk: r for r in pages.rows(project, model.objects.filter(project=project))}
    rows = [read[r.pk] for r in records]
    people, extra = pages.decorated(project, caller, rows)
    request = RequestFactory().get("/")
    template = engine.get_template(TEMPLATES[slug])
    answers = list(ANSWERS)
    if slug in ("work-packages", "risks"):
        answers += [{"bulk_selected": {str(rows[1].pk), "other"}}, {"bulk_selected": set()}]
    if slug == "work-packages":
        answers += [
            {"moved_id": rows[1].pk, "moved_direction": "up"},
            {"moved_id": rows[1].pk, "moved_direction": "down"},
            {"picking": True, "link_errors": {}, "linked": ""},
            {
                "picking": True,
                "linked": "ALPHA-<9>",
                "link_errors": {"issueKey": ["issueKey: no such <issue>", "Second"]},
            },
        ]
    compared = 0
    for r, more, schedule in itertools.product(rows, answers, _schedules()):
        if schedule is not None:
            if slug != "work-packages":
                continue
            r.schedule = schedule
        context = pages.common_context(
            project, caller, request, r=r, people=people, extra=extra, **more
        )
        expected = template.render(Context(context))
        assert ROWS[slug](r, RowContext.of(context)) == expected, (slug, role, r.pk, more)
        compared += 1
    assert compared >= len(rows) * len(ANSWERS)


def test_the_varied_rows_reach_every_branch(cast):
    """The rows above show what the row can show: a closed risk, a treating decision, an
    external approver, a withdraw and apply form (the sponsor's and the lead's answers)."""
    records = _records(cast)
    project = cast.project
    pages = REGISTERS["changes"]
    drawn = []
    for role in ("lead", "sponsor", "viewer"):
        caller = caller_for(getattr(cast, role), project)
        changes = type(records["changes"][0]).objects.filter(project=project)
        rows = list(pages.rows(project, changes))
        people, _ = pages.decorated(project, caller, rows)
        context = pages.common_context(project, caller, RequestFactory().get("/"), people=people)
        drawn += [ROWS["changes"](r, RowContext.of(context)) for r in rows]
    html = "".join(drawn)
    assert "(external)" in html and "inferred from the impacts" in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    risks = REGISTERS["risks"]
    caller = caller_for(cast.lead, project)
    rows = list(risks.rows(project, type(records["risks"][0]).objects.filter(project=project)))
    people, _ = risks.decorated(project, caller, rows)
    context = risks.common_context(project, caller, RequestFactory().get("/"), people=people)
    html = "".join(ROWS["risks"](r, RowContext.of(context)) for r in rows)
    for shown in ("Treated by", 'class="closed"', "Record decision", "as inherent", "accepted"):
        assert shown in html, shown


# The sortable header cells (`{% sort_header %}`, registers.templatetags.register_rows) against
# the include they replace, kept as `row_oracle/registers/_th.html`.
COLUMN_STATES = [
    {"active": False, "direction": "", "next": "asc"},
    {"active": True, "direction": "asc", "next": "desc"},
    {"active": True, "direction": "desc", "next": "asc"},
    None,  # a key the table does not sort by
]
QUERIES = [
    {},
    {"sort": "status", "dir": "desc"},
    {"q": HOSTILE, "after": "abc", "before": "x&y=<z>", "status": "Open"},
    {"sort": "name", "dir": "asc", "owner": "a b", "page": "2"},
]


@pytest.mark.parametrize("slug", ["work-packages", "risks", "decisions", "changes"])
def test_a_header_cell_written_in_python_is_the_include_s_cell(engine, slug):
    from registers import paging
    from registers.templatetags.register_rows import sort_header

    pages = REGISTERS[slug]
    template = engine.get_template("registers/_th.html")
    keys = [*paging.SPECS[slug].sorts, "notAColumn"]
    compared = 0
    for key, state, query, label, num in itertools.product(
        keys, COLUMN_STATES, QUERIES, ["", "Named <b>&</b> “it”"], [False, True]
    ):
        columns = {} if state is None else {key: state}
        context = {
            "table": SimpleNamespace(columns=columns),
            "reg": pages,
            "request": RequestFactory().get("/", query),
            "key": key,
            "label": label,
            "num": num,
        }
        expected = template.render(Context(context))
        assert sort_header(context, key, label, num=num) == expected, (key, state, query)
        compared += 1
    assert compared == len(keys) * 64
