"""Portfolio pages. Site settings (governance group, themes, benefit-review cadence, RAG
thresholds) are edited here by site administrators; the portfolio itself (page, exports) and
the lessons across projects are read here behind the portfolio/agent gate."""

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import urlencode

from charter.models import APPROVAL_STATUSES
from governance import permissions, services
from governance.errors import Stale, ValidationFailed
from governance.http import page, render_htmx
from governance.models import BR_CADENCES, RAG_CHOICES, THEMES_MAX, SiteSettings
from governance.people import resolve
from portfolio import exports, selectors
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


COLUMNS = [
    {"label": "Project", "sort": "key"},
    {"label": "Lead"},
    {"label": "Theme", "sort": "theme"},
    {"label": "Approval", "sort": "approvalStatus"},
    {"label": "Ver.", "sort": "version", "num": True},
    {"label": "Phase", "sort": "phase"},
    {"label": "Overall", "sort": "overall"},
    {"label": "Cost", "sort": "cost"},
    {"label": "Schedule", "sort": "schedule"},
    {"label": "Scope", "sort": "scope"},
    {"label": "Risk", "sort": "risk"},
    {"label": "Approved budget", "sort": "approvedBudget", "num": True},
    {"label": "Forecast (EAC)", "sort": "eac", "num": True},
    {"label": "Overrun", "sort": "overrun", "num": True},
    {"label": "Slip (days)", "sort": "slip", "num": True},
    {"label": "Top risk", "sort": "topRisk", "num": True},
    {"label": "Pending decisions", "sort": "decisions", "num": True},
    {"label": "Awaiting application", "sort": "awaiting", "num": True},
    {"label": "Adoption", "sort": "adoptionGap"},
    {"label": "Status", "sort": "stale"},
    {"label": "Review due", "sort": "reviewDue"},
    {"label": "Why"},
]


def _sort_links(params: selectors.Params) -> dict[str, dict]:
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


@page("GET")
def portfolio_index(request):
    """One row per viewable project: effective RAGs with their drivers, approval state, budget
    against forecast, slip, risks, pending decisions and changes; filters, sorting, grouping by
    theme, summary counts and a RAG heat grid. HTMX swaps the results on filter changes."""
    permissions.require_portfolio_access(request)
    data = selectors.portfolio(request, request.GET)
    people = resolve(data.leads)
    return render_htmx(
        request,
        "portfolio/portfolio.html",
        {
            "data": data,
            "people": people,
            "columns": COLUMNS,
            "sorts": _sort_links(data.params),
            "rag_dims": DIMENSIONS,
            "approval_statuses": APPROVAL_STATUSES,
            "rag_choices": RAG_CHOICES,
            "dimensions": [
                (d, selectors.HEAT_LABELS.get(d, "Any")) for d in selectors.DIMENSION_CHOICES
            ],
            "no_theme": selectors.NO_THEME,
            "section": "portfolio",
        },
        partial="results",
    )


@page("GET")
def portfolio_export(request):
    """The portfolio as CSV or XLSX (format=csv|xlsx), with the page's filters and sorting."""
    permissions.require_portfolio_access(request)
    kind = request.GET.get("format", "csv")
    if kind not in ("csv", "xlsx"):
        raise ValidationFailed({"format": ["Must be csv or xlsx."]})
    data = selectors.portfolio(request, request.GET)
    people = resolve(data.leads)
    stamp = timezone.localdate().isoformat()
    if kind == "csv":
        response = HttpResponse(
            exports.to_csv(data.rows, people), content_type="text/csv; charset=utf-8"
        )
    else:
        response = HttpResponse(
            exports.to_xlsx(data.rows, people),
            content_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        )
    response["Content-Disposition"] = f'attachment; filename="portfolio-{stamp}.{kind}"'
    return response


@page("GET")
def lessons(request):
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


def _settings_form(post) -> dict:
    themes = []
    for index in range(THEMES_MAX):
        name = post.get(f"theme-{index}-name", "").strip()
        if name:
            themes.append({"name": name, "enabled": post.get(f"theme-{index}-enabled") == "on"})
    thresholds = {}
    for key in settings.RAG_THRESHOLDS:
        raw = post.get(f"threshold-{key}", "").strip()
        if raw == "":
            thresholds[key] = None
            continue
        try:
            thresholds[key] = float(raw) if "." in raw else int(raw)
        except ValueError:
            thresholds[key] = raw
    data = {
        "governanceGroup": post.get("governance_group", ""),
        "themes": themes,
        "brCadenceDefault": post.get("br_cadence_default", ""),
        "ragThresholds": thresholds,
    }
    if "currency" in post:
        data["currency"] = post["currency"]
    return data


@page("GET", "POST")
def site_settings(request):
    user = permissions.require_site_admin(request)
    site = SiteSettings.load()
    errors: dict = {}
    status = 200
    submitted = None
    if request.method == "POST":
        submitted = _settings_form(request.POST)
        revision = request.POST.get("revision", "")
        try:
            services.site_settings_update(
                actor=user,
                data=submitted,
                expected_revision=int(revision) if revision.isdigit() else None,
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
    themes = list(data["themes"]) + [{"name": "", "enabled": True}] * (
        THEMES_MAX - len(data["themes"])
    )
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
