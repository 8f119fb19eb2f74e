"""Portfolio pages. Site settings (governance group, themes, benefit-review cadence, RAG
thresholds) are edited here by site administrators."""

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render

from governance import permissions, services
from governance.errors import Stale, ValidationFailed
from governance.http import page
from governance.models import BR_CADENCES, THEMES_MAX, SiteSettings

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


@page("GET")
def portfolio_index(request):
    permissions.require_portfolio_access(request)
    return render(
        request,
        "governance/not_yet.html",
        {
            "title": "Portfolio",
            "what": "One row per project with effective RAG, approval state, budget and risks.",
            "section": "portfolio",
        },
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
    return {
        "governanceGroup": post.get("governance_group", ""),
        "themes": themes,
        "brCadenceDefault": post.get("br_cadence_default", ""),
        "ragThresholds": thresholds,
    }


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
