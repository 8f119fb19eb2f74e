"""Benefits planned against realised on the realisation page: the planned benefits of the
builtin financial model, cumulative by year, against the benefit realised so far that each
review may record (benefitRealisedToDate)."""

import datetime as dt
import json
from types import SimpleNamespace

from django.utils import timezone

from charter.pictures import benefits_chart, planned_benefits, realised_benefits
from tests.html import inline_problems

CHARTER = "/api/v1/projects/ALPHA/charter"
PAGE = "/projects/ALPHA/charter/realisation/"
LINES = [
    {"year": 0, "cost": 100, "benefit": 0},
    {"year": 1, "cost": 10, "benefit": 50},
    {"year": 2, "cost": 10, "benefit": 80},
]


def review(client, headers, body):
    return client.post(
        f"{CHARTER}/realisation-review",
        data=json.dumps(body),
        content_type="application/json",
        **headers,
    )


def test_a_review_records_the_benefit_realised_so_far(cast, arrange, client, bearer):
    arrange("InRealisation")
    headers = bearer(cast.editor)
    body = review(client, headers, {"note": "On track", "confidence": "High"}).json()
    assert "benefitRealisedToDate" not in body["realisationReviews"][0]  # optional
    body = review(
        client,
        headers,
        {"note": "Savings", "confidence": "High", "benefitRealisedToDate": "1250.5"},
    ).json()
    assert body["realisationReviews"][1]["benefitRealisedToDate"] == 1250.5
    for bad, message in (("-5", "Must be 0 or more."), ("12k", "Must be a number.")):
        response = review(
            client, headers, {"note": "x", "confidence": "High", "benefitRealisedToDate": bad}
        )
        assert response.status_code == 422
        assert response.json()["error"]["fields"]["benefitRealisedToDate"] == [message]


def case(**fields):
    base = {
        "financial_case": {"mode": "builtin", "builtin": {"lines": LINES}},
        "realisation_reviews": [],
        "approved_at": dt.datetime(2026, 3, 1, tzinfo=dt.UTC),
        "realisation_started_at": None,
    }
    return SimpleNamespace(**{**base, **fields})


def test_planned_is_cumulative_by_year_and_realised_is_the_last_review_of_each_year():
    reviews = [
        {"at": "2027-02-01T10:00:00+00:00", "benefitRealisedToDate": 20},
        {"at": "2027-09-01T10:00:00+00:00", "benefitRealisedToDate": 45},
        {"at": "2027-10-01T10:00:00+00:00"},  # no figure: skipped
    ]
    c = case(realisation_reviews=reviews)
    assert planned_benefits(c) == {0: 0, 1: 50, 2: 80}
    assert realised_benefits(c, 2026) == {1: 45}
    chart = benefits_chart(c)
    assert [row[0].text for row in chart.rows] == [
        "Year 0 (2026)",
        "Year 1 (2027)",
        "Year 2 (2028)",
    ]
    assert [[cell.text for cell in row[1:]] for row in chart.rows] == [
        ["0", "—"],
        ["50", "45"],
        ["130", "—"],
    ]
    assert 'class="bar series-realised"' in str(chart.svg)
    assert inline_problems(str(chart.svg)) == []


def test_nothing_planned_nor_realised_says_so():
    chart = benefits_chart(case(financial_case=None))
    assert chart.empty.startswith("Nothing to draw yet")


def test_the_realisation_page_draws_the_chart_and_offers_the_field(cast, arrange, client_for):
    arrange(
        "InRealisation",
        financial_case={"mode": "builtin", "builtin": {"lines": LINES}},
        approved_at=timezone.now(),
        realisation_started_at=timezone.now(),
        realisation_reviews=[
            {
                "id": "r1",
                "at": timezone.now().isoformat(),
                "byAccountId": cast.lead.account_id,
                "note": "n",
                "confidence": "High",
                "benefitRealisedToDate": 30,
            }
        ],
    )
    html = client_for(cast.lead).get(PAGE).content.decode()
    assert 'id="benefits"' in html and "Benefits: planned against realised" in html
    assert "Show as a table" in html and "Realised to date" in html
    assert 'name="benefitRealisedToDate"' in html
    assert inline_problems(html) == []
