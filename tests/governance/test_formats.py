"""One date format on the pages and the site's currency on every amount (a site setting,
EUR by default); the API keeps ISO dates and plain numbers."""

import datetime as dt
import re
from decimal import Decimal

from django.test import Client

from governance import formatting
from governance.models import SiteSettings
from status.models import ProjectStatus
from tests.factories import ChangeRequestFactory, WorkPackageFactory


def test_dates_and_amounts_as_pages_write_them(db):
    assert formatting.day(dt.date(2026, 11, 22)) == "22 Nov 2026"
    assert formatting.day("2026-11-22") == "22 Nov 2026"
    assert formatting.moment("2026-11-22T14:05:00+00:00") == "22 Nov 2026, 14:05"
    assert formatting.money(Decimal("12500")) == "EUR\u00a012,500"
    assert formatting.money(Decimal("12500.5")) == "EUR\u00a012,500.50"
    assert formatting.money(Decimal("-500"), signed=True) == "EUR\u00a0-500"
    assert formatting.money(Decimal("500"), signed=True) == "EUR\u00a0+500"
    assert formatting.money(None) == ""


def test_a_date_span_is_written_once_and_follows_the_locale(settings):
    start, end = dt.date(2026, 3, 1), dt.date(2026, 6, 30)
    span = '<span class="date">1 Mar 2026</span> to <span class="date">30 Jun 2026</span>'
    assert formatting.date_span(start, end) == span
    assert formatting.date_span(start, None).endswith('<span class="date">…</span>')
    assert formatting.date_span(None, None) == ""
    settings.LANGUAGE_CODE = "en-us"  # another locale's format: not the cached text
    assert "1 Mar 2026" not in formatting.date_span(start, end)


def test_register_pages_use_one_date_format_and_the_currency(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        name="Build",
        planned_start_date=dt.date(2026, 3, 1),
        planned_end_date=dt.date(2026, 6, 30),
        budget=Decimal("12000"),
    )
    ChangeRequestFactory(project=cast.project, summary="More", impact_budget=Decimal("5000"))
    client = client_for(cast.viewer)
    html = client.get("/projects/ALPHA/registers/work-packages/").content.decode()
    assert "1 Mar 2026" in html and "30 Jun 2026" in html and "2026-03-01" not in html
    assert "EUR\u00a012,000" in html
    html = client.get("/projects/ALPHA/registers/changes/").content.decode()
    assert "EUR\u00a0+5,000" in html
    assert not re.search(r">\d{4}-\d{2}-\d{2}<", html)


def test_the_currency_is_a_site_setting(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Build", budget=Decimal("12000"))
    admin = client_for(cast.site_admin)
    page = admin.get("/portfolio/settings/").content.decode()
    assert 'name="currency" value="EUR"' in page
    site = SiteSettings.load()
    response = admin.post(
        "/portfolio/settings/",
        {"revision": site.revision, "br_cadence_default": "Quarterly", "currency": "gbp",
         "governance_group": ""},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    assert SiteSettings.load().currency == "GBP"
    html = client_for(cast.viewer).get("/projects/ALPHA/registers/work-packages/").content
    assert "GBP\u00a012,000" in html.decode()
    response = admin.post(
        "/portfolio/settings/",
        {"revision": SiteSettings.load().revision, "br_cadence_default": "Quarterly",
         "currency": "pounds", "governance_group": ""},
    )  # fmt: skip
    assert response.status_code == 422
    assert "three-letter currency code" in response.content.decode()


def test_status_amounts_carry_the_currency_and_the_api_keeps_numbers(cast, client_for, bearer):
    ProjectStatus.objects.create(project=cast.project, revised_forecast=Decimal("250000"))
    html = client_for(cast.viewer).get("/projects/ALPHA/status/").content.decode()
    assert "EUR\u00a0250,000" in html
    body = Client().get("/api/v1/projects/ALPHA/status", **bearer(cast.viewer)).json()
    assert body["revisedForecast"] == 250000
