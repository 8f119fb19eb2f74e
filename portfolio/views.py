"""Portfolio pages. Site settings (governance group, themes, benefit-review cadence, RAG
thresholds) are edited here by site administrators; the portfolio itself (page, exports) and
the lessons across projects are read here behind the portfolio/agent gate."""

import re
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from charter.models import APPROVAL_STATUSES
from gates import columns as gate_columns
from governance import cleaning, formatting, permissions, services
from governance.errors import Stale, ValidationFailed
from governance.http import form_revision, page, render_htmx
from governance.models import BR_CADENCES, RAG_CHOICES, THEMES_MAX, SiteSettings, User
from governance.people import by_name, resolve
from portfolio import exports, extensions, pictures, selectors, table
from portfolio.models import PortfolioColumns
from status import earned_value
from status.models import DIMENSIONS

STALE_MESSAGE = (
    "Another administrator saved these settings after you opened this page. Nothing of yours "
    "was saved: the form shows your values over theirs; review and save again."
)

THRESHOLD_LABELS = {
    "costGreenMaxPct": "Cost: Green up to this overrun (%)",
    "costAmberMaxPct": "Cost: Amber up to this overrun (%)",
    "scheduleGreenMaxDays": "Schedule: Green up to this slip (days)",
    "scheduleAmberMaxDays": "Schedule: Amber up to this slip (days)",
    "scopeRedAfterDays": "Scope: Red when a pending change has waited more than (days)",
    "riskAmberMinScore": "Risk: Amber from this score",
    "riskRedMinScore": "Risk: Red from this score",
}


COLUMNS: list[dict[str, Any]] = [
    {"key": "project", "label": "Project", "sort": "key"},
    {"key": "lead", "label": "Lead"},
    {"key": "theme", "label": "Theme", "sort": "theme"},
    {"key": "approval", "label": "Approval", "sort": "approvalStatus"},
    {"key": "version", "label": "Ver.", "sort": "version", "num": True, "title": "Version"},
    {"key": "phase", "label": "Phase", "sort": "phase"},
    {"key": "stage", "label": "Stage", "title": "Current stage (the stage plan's)"},
    {
        "key": "gate",
        "label": "At gate",
        "num": True,
        "title": "Days at gate",
        "hint": "Days the current stage's gate review has waited for the sponsor's decision",
    },
    {"key": "overall", "label": "Overall", "sort": "overall"},
    {"key": "cost", "label": "Cost", "sort": "cost"},
    {"key": "schedule", "label": "Schedule", "sort": "schedule"},
    {"key": "scope", "label": "Scope", "sort": "scope"},
    {"key": "risk", "label": "Risk", "sort": "risk"},
    {"key": "budget", "label": "Approved budget", "sort": "approvedBudget", "num": True},
    {
        "key": "eac",
        "label": "Forecast (EAC)",
        "sort": "eac",
        "num": True,
        "hint": "Estimate at completion: the work packages' forecasts, or the project "
        "manager's revised forecast (the cost-performance estimate BAC \u00f7 CPI is another "
        "figure: the Why column compares them)",
    },
    {"key": "overrun", "label": "Overrun", "sort": "overrun", "num": True},
    {"key": "slip", "label": "Slip (days)", "sort": "slip", "num": True},
    {
        "key": "topRisk",
        "label": "Top risk",
        "sort": "topRisk",
        "num": True,
        "hint": "The highest open risk score: its residual score where one is assessed, "
        "else its inherent score",
    },
    {"key": "decisions", "label": "Pending decisions", "sort": "decisions", "num": True},
    {"key": "awaiting", "label": "Awaiting application", "sort": "awaiting", "num": True},
    {"key": "adoption", "label": "Adoption", "sort": "adoptionGap"},
    {"key": "stale", "label": "Status", "sort": "stale", "title": "Status freshness"},
    {"key": "reviewDue", "label": "Review due", "sort": "reviewDue"},
    {
        "key": "exception",
        "label": "Exception",
        "sort": "exception",
        "title": "In exception: beyond tolerance, days open until the sponsor decides",
    },
    {
        "key": "cpi",
        "label": "CPI",
        "sort": "cpi",
        "num": True,
        "title": "Cost performance index: CPI = EV \u00f7 AC",
    },
    {
        "key": "spi",
        "label": "SPI",
        "sort": "spi",
        "num": True,
        "title": "Schedule performance index: SPI = EV \u00f7 PV",
    },
    {"key": "why", "label": "Why"},
]
# A column's header tooltip says what its figure is (its hint), else its full name (its
# title, which the column chooser lists); the chooser never lists a hint's long sentence.
COLUMNS = [
    {**c, "hint": c.get("hint") or c.get("title", ""), "title": c.get("title", "")} for c in COLUMNS
]
COLUMN_KEYS = [c["key"] for c in COLUMNS]
# The project column is always shown; the rest fit 1,440 px by default.
FIXED_COLUMNS = {"project"}
DEFAULT_COLUMNS = [
    "project",
    "lead",
    "approval",
    "overall",
    "cost",
    "schedule",
    "scope",
    "risk",
    "budget",
    "eac",
    "overrun",
    "slip",
    "exception",
    "why",
]


def with_extra(extra: list[extensions.Column]) -> list[dict[str, Any]]:
    """The page's columns for a viewer: the portfolio's own, and the columns the apps above
    add that this viewer sees (`portfolio.extensions`), before the Why column."""
    added = [c.as_page_column() for c in extra]
    return [*COLUMNS[:-1], *added, COLUMNS[-1]] if added else COLUMNS


def shown_columns(user: User, columns: list[dict[str, Any]] | None = None) -> list[str]:
    """The column keys this person chose (in the page's order) of `columns` (the
    portfolio's own by default), or the default set."""
    chosen = PortfolioColumns.objects.filter(user=user).values_list("columns", flat=True).first()
    keys = set(chosen or DEFAULT_COLUMNS) | FIXED_COLUMNS
    return [c["key"] for c in columns or COLUMNS if c["key"] in keys]


def _sort_links(params: selectors.Params) -> dict[str, dict[str, Any]]:
    """Each sortable column's link: ascending first, then reversed; the current one marked."""
    query = params.as_query()
    links = {}
    for column in COLUMNS:
        name = column.get("sort")
        if not name:
            continue
        current = params.sort == name
        wanted = f"-{name}" if current and not params.descending else name
        state = ("descending" if params.descending else "ascending") if current else None
        links[name] = {"url": "?" + urlencode({**query, "sort": wanted}), "state": state}
    return links


def _page_links(params: selectors.Params, data: selectors.Portfolio) -> dict[str, str]:
    """The next and previous pages' links, with the same filters, sort and grouping."""
    query = params.as_query()
    links = {}
    for name, cursor in (("next", data.next), ("previous", data.previous)):
        if cursor:
            links[name] = "?" + urlencode({**query, "cursor": cursor})
    return links


@page("GET")
def portfolio_index(request: HttpRequest) -> HttpResponse:
    """One row per viewable project: effective RAGs with their drivers, approval state, budget
    against forecast, slip, risks, pending decisions and changes; filters, sorting, grouping by
    theme, summary counts and a RAG heat grid. HTMX swaps the results on filter changes."""
    permissions.require_portfolio_access(request)
    user = permissions.request_user(request)
    # The added columns' values are read only when one of them is shown.
    shown = shown_columns(user, with_extra(extensions.columns_for(request)))
    data = selectors.portfolio(request, request.GET, with_cells=True, columns=shown)
    people = resolve(data.leads)
    every_column = with_extra(data.extra_columns)
    groups = data.groups or []
    table.render_rows(data.rows, people, shown, DIMENSIONS, data.extra_columns)
    # Read once whether or not a row shows an amount: the page's queries do not depend on
    # which rows the filters leave.
    formatting.currency()
    links = _page_links(data.params, data)
    return render_htmx(
        request,
        "portfolio/portfolio.html",
        {
            "data": data,
            "people": people,
            "lead_choices": by_name(data.leads, people),
            "columns": [c for c in every_column if c["key"] in shown],
            "all_columns": every_column,
            "extra_columns": data.extra_columns,
            "fixed_columns": FIXED_COLUMNS,
            "shown": shown,
            "groups": groups,
            "sorts": _sort_links(data.params),
            "pages": links,
            "earned": {
                "values": data.earned,
                "readings": earned_value.readings(data.earned),
            },
            "rag_dims": DIMENSIONS,
            "approval_statuses": APPROVAL_STATUSES,
            "rag_choices": RAG_CHOICES,
            "dimensions": [
                (d, selectors.HEAT_LABELS.get(d, "Any")) for d in selectors.DIMENSION_CHOICES
            ],
            "no_theme": selectors.NO_THEME,
            "at_gate": gate_columns.AT_GATE,
            "stage_names": gate_columns.stage_choices(
                [data.params.stage, *(r["currentStage"] for r in data.rows)]
            ),
            "section": "portfolio",
            "pictures_html": pictures.pictures_html(
                pictures.portfolio_pictures(
                    data.rows,
                    services.rag_thresholds(permissions.site_settings(request)),
                    data.risk_cells,
                    bubbles=data.bubbles,
                    matching=data.summary["projects"],
                    whole=links.get("next", ""),
                )
            ),
        },
        partial="results",
    )


@page("POST")
def portfolio_columns(request: HttpRequest) -> HttpResponse:
    """Save the columns this person sees in the portfolio (or go back to the default set)."""
    permissions.require_portfolio_access(request)
    if request.POST.get("reset"):
        PortfolioColumns.objects.filter(user=permissions.request_user(request)).delete()
        messages.success(request, "The portfolio shows the default columns again.")
    else:
        wanted = set(request.POST.getlist("columns")) | FIXED_COLUMNS
        offered = with_extra(extensions.columns_for(request))
        chosen = [c["key"] for c in offered if c["key"] in wanted]
        with transaction.atomic():
            PortfolioColumns.objects.update_or_create(
                user=permissions.request_user(request), defaults={"columns": chosen}
            )
        messages.success(request, f"Columns saved: the portfolio shows {len(chosen)} of them.")
    # Back to the same filters: the query is re-encoded, so it can only ever be a query.
    query = QueryDict(request.POST.get("query", "")[:2000]).urlencode()
    return redirect(reverse("portfolio") + (f"?{query}" if query else ""))


@page("GET")
def portfolio_export(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The portfolio as CSV or XLSX (format=csv|xlsx), with the page's filters and sorting."""
    permissions.require_portfolio_access(request)
    kind = request.GET.get("format", "csv")
    if kind not in ("csv", "xlsx"):
        raise ValidationFailed({"format": ["Must be csv or xlsx."]})
    data = selectors.portfolio(request, request.GET, paged=False, with_summary=False)
    people = resolve(data.leads)
    stamp = timezone.localdate().isoformat()
    # Streamed: the CSV written as it is sent, the XLSX sent from the file it was written to.
    if kind == "xlsx":
        file = exports.xlsx_file(data.rows, people, data.extra_columns)
        return exports.xlsx_response(file, f"portfolio-{stamp}.xlsx")
    response = StreamingHttpResponse(
        exports.csv_chunks(data.rows, people, data.extra_columns),
        content_type="text/csv; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="portfolio-{stamp}.csv"'
    return response


@page("GET")
def lessons(request: HttpRequest) -> HttpResponse:
    """Every close-out and realisation lesson across the viewable projects, searchable."""
    permissions.require_portfolio_access(request)
    q = request.GET.get("q", "").strip()
    kind = request.GET.get("kind", "")
    kind = kind if kind in selectors.LESSON_KINDS else ""
    theme = request.GET.get("theme", "").strip()
    found = selectors.lessons(request, q=q, kind=kind, theme=theme)
    return render_htmx(
        request,
        "portfolio/lessons.html",
        {
            "entries": found.entries,
            "total": found.total,
            "q": q,
            "kind": kind,
            "theme": theme,
            "kinds": selectors.LESSON_KINDS,
            "themes": found.themes,
            "no_theme": selectors.NO_THEME,
            "section": "lessons",
        },
        partial="results",
    )


def _settings_form(post: QueryDict) -> dict[str, Any]:
    themes = []
    for index in range(THEMES_MAX):
        name = post.get(f"theme-{index}-name", "").strip()
        if name:
            theme = {"name": name, "enabled": post.get(f"theme-{index}-enabled") == "on"}
            # The stored name the row showed: a new name there renames that theme.
            was = post.get(f"theme-{index}-was", "").strip()
            if was:
                theme["renamedFrom"] = was
            themes.append(theme)
    thresholds: dict[str, int | float | str | None] = {}
    for key in settings.RAG_THRESHOLDS:
        raw = post.get(f"threshold-{key}", "").strip()
        if raw == "":
            thresholds[key] = None
            continue
        # Digits (cleaning.whole_number: never int() of thousands of them), or a decimal;
        # anything else goes on as typed, refused by the service naming the threshold.
        whole = cleaning.whole_number(raw)
        if whole is not None:
            thresholds[key] = whole
        elif re.fullmatch(r"[0-9]{1,18}\.[0-9]{1,6}", raw):
            thresholds[key] = float(raw)
        else:
            thresholds[key] = raw
    data: dict[str, Any] = {
        "governanceGroup": post.get("governance_group", ""),
        "themes": themes,
        "brCadenceDefault": post.get("br_cadence_default", ""),
        "ragThresholds": thresholds,
    }
    if "currency" in post:
        data["currency"] = post["currency"]
    return data


@page("GET", "POST")
def site_settings(request: HttpRequest) -> HttpResponse:
    user = permissions.require_site_admin(request)
    site = SiteSettings.load()
    errors: dict[str, Any] = {}
    status = 200
    submitted = None
    if request.method == "POST":
        submitted = _settings_form(request.POST)
        try:
            services.site_settings_update(
                actor=user,
                data=submitted,
                expected_revision=form_revision(request.POST),
            )
        except ValidationFailed as exc:
            errors, status = exc.fields, 422
        except Stale:
            errors, status = {"revision": [STALE_MESSAGE]}, 409
            site = SiteSettings.load()
        else:
            messages.success(request, "Settings saved.")
            return redirect("site-settings")
    data = services.site_settings_to_dict(site)
    if submitted is not None:
        data.update({k: v for k, v in submitted.items() if k != "ragThresholds"})
        data["governanceGroup"] = submitted["governanceGroup"]
    # Each row with the stored name it stands for ("was"): a stored theme's own, or on a
    # refused form the one the row was sent with.
    themes = [
        {**t, "was": t.get("renamedFrom", "") if submitted is not None else t["name"]}
        for t in data["themes"]
    ] + [{"name": "", "enabled": True, "was": ""}] * (THEMES_MAX - len(data["themes"]))
    overrides = site.rag_thresholds or {}
    threshold_rows = [
        {
            "key": key,
            "label": THRESHOLD_LABELS.get(key, key),
            "default": default,
            "value": (submitted["ragThresholds"].get(key) if submitted else overrides.get(key)),
            "errors": errors.get(f"ragThresholds.{key}", []),
        }
        for key, default in settings.RAG_THRESHOLDS.items()
    ]
    return render(
        request,
        "portfolio/site_settings.html",
        {
            "data": data,
            "themes": themes,
            "cadences": BR_CADENCES,
            "threshold_rows": threshold_rows,
            "errors": errors,
            "section": "settings",
            "themes_max": THEMES_MAX,
            "revision": site.revision,
        },
        status=status,
    )
