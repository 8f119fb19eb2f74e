"""The financial case: the builtin model's metrics against values computed independently (by
hand and in spreadsheet terms), the lenient mode, validation, and the never-saved default."""

import json

import pytest

from charter import finance
from governance.cleaning import FieldErrors


def model(lines, rate=10, horizon=5):
    return {
        "currency": "EUR",
        "discountRatePct": rate,
        "horizonYears": horizon,
        "lines": [{"year": y, "cost": c, "benefit": b} for y, c, b in lines],
    }


# Year 0 costs 1000; benefits of 300, 400 and 500 follow. By hand:
#   NPV at 10% = -1000 + 300/1.1 + 400/1.1^2 + 500/1.1^3 = -1000 + 272.73 + 330.58 + 375.66
#              = -21.04
#   IRR: the rate r with 300/(1+r) + 400/(1+r)^2 + 500/(1+r)^3 = 1000; a spreadsheet's
#        IRR(-1000, 300, 400, 500) gives 8.90%
#   payback: cumulative -1000, -700, -300, +200: 2 years + 300/500 of the third = 2.6
#   ROI = (1200 - 1000) / 1000 = 20%
TEXTBOOK = [(0, 1000, 0), (1, 0, 300), (2, 0, 400), (3, 0, 500)]


def test_metrics_match_the_textbook_example():
    assert finance.compute(model(TEXTBOOK)) == {
        "totalCost": 1000.0,
        "totalBenefit": 1200.0,
        "npv": -21.04,
        "irr": 8.9,
        "paybackYears": 2.6,
        "roiPct": 20.0,
    }


def test_npv_at_zero_rate_is_the_plain_sum_and_irr_makes_npv_zero():
    computed = finance.compute(model(TEXTBOOK, rate=0))
    assert computed["npv"] == 200.0
    irr = finance.irr(finance.net_flows(model(TEXTBOOK)))
    assert abs(finance.npv(finance.net_flows(model(TEXTBOOK)), irr)) < 1e-6


def test_costs_and_benefits_in_the_same_year_net_off():
    # Net flows -100, +60, +60: payback 1 + 40/60 = 1.67 years; ROI (170-100)/100... by hand:
    # costs 100 + 20 = 120, benefits 80 + 60 = 140 -> ROI 16.67%.
    computed = finance.compute(model([(0, 100, 0), (1, 20, 80), (2, 0, 60)], rate=0))
    assert computed["paybackYears"] == 1.67
    assert computed["roiPct"] == 16.67
    assert computed["npv"] == 20.0


def test_missing_years_count_as_zero():
    # Year 1 has no line: flows -1000, 0, 1210 -> IRR exactly 10% ((1+r)^2 = 1.21).
    computed = finance.compute(model([(0, 1000, 0), (2, 0, 1210)]))
    assert computed["irr"] == 10.0
    assert computed["npv"] == 0.0
    # Cumulative -1000, -1000, +210: recovered during year 2, (2 - 1) + 1000/1210 = 1.83.
    assert computed["paybackYears"] == 1.83


@pytest.mark.parametrize(
    "lines",
    [
        [(0, 1000, 0), (1, 500, 0)],  # only costs: cash flows never change sign
        [(0, 0, 100), (1, 0, 200)],  # only benefits
        [(0, 100, 100)],  # nets to zero
    ],
)
def test_no_irr_when_cash_flows_never_change_sign(lines):
    assert finance.compute(model(lines))["irr"] is None


def test_only_costs_never_pay_back():
    computed = finance.compute(model([(0, 1000, 0), (1, 500, 0)]))
    assert computed["paybackYears"] is None
    assert computed["roiPct"] == -100.0


def test_benefits_from_the_start_pay_back_at_once_and_roi_needs_a_cost():
    computed = finance.compute(model([(0, 0, 100)]))
    assert computed["paybackYears"] == 0.0
    assert computed["roiPct"] is None


def test_no_lines_no_metrics():
    assert finance.compute(model([])) == dict.fromkeys(finance.METRICS)


def test_a_never_saved_case_serves_a_fresh_empty_builtin_model(cast, client, bearer):
    body = client.get("/api/v1/projects/ALPHA/charter", **bearer(cast.viewer)).json()
    assert body["financialCase"] == {
        "mode": "builtin",
        "attached": {"label": "", "url": None, "pageId": None, **dict.fromkeys(finance.METRICS)},
        "builtin": {
            "currency": "EUR",
            "discountRatePct": 8,
            "horizonYears": 5,
            "lines": [],
            "computed": dict.fromkeys(finance.METRICS),
        },
        "boardPaperPageId": None,
        "createdAt": None,
        "updatedAt": None,
    }


def patch(client, headers, body):
    return client.patch(
        "/api/v1/projects/ALPHA/charter",
        data=json.dumps(body),
        content_type="application/json",
        **headers,
    )


def test_saved_builtin_model_is_recomputed_on_read(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {
            "financialCase": {
                "mode": "builtin",
                "builtin": {
                    "currency": "gbp",
                    "discountRatePct": 10,
                    "horizonYears": 3,
                    "lines": [{"year": y, "cost": c, "benefit": b} for y, c, b in TEXTBOOK],
                    "computed": {"npv": 999999},  # derived: ignored
                },
            }
        },
    )
    assert response.status_code == 200, response.content
    financial = response.json()["financialCase"]
    assert financial["builtin"]["currency"] == "GBP"
    assert financial["builtin"]["computed"]["npv"] == -21.04
    assert financial["createdAt"] and financial["updatedAt"]


def test_an_invalid_mode_becomes_none(cast, client, bearer):
    response = patch(client, bearer(cast.lead), {"financialCase": {"mode": "spreadsheet"}})
    assert response.status_code == 200
    assert response.json()["financialCase"]["mode"] == "none"


def test_attached_model_keeps_hand_entered_headline_figures(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {
            "financialCase": {
                "mode": "attached",
                "attached": {
                    "label": "Finance model v3",
                    "url": "https://files.example.com/model.xlsx",
                    "npv": "-1500.50",
                    "irr": 7.5,
                    "totalCost": 120000,
                },
            }
        },
    )
    attached = response.json()["financialCase"]["attached"]
    assert attached["npv"] == -1500.5 and attached["irr"] == 7.5
    assert attached["totalCost"] == 120000 and attached["roiPct"] is None


def test_the_page_names_the_attached_model_s_figures_in_words(cast, client, bearer, client_for):
    patch(
        client,
        bearer(cast.lead),
        {"financialCase": {"mode": "attached", "attached": {"label": "Model", "npv": 10}}},
    )
    page = client_for(cast.lead).get("/projects/ALPHA/charter/").content.decode()
    for words in ("Total cost", "Total benefit", "NPV", "IRR", "Payback years", "ROI %"):
        assert f"<dt>{words}</dt>" in page
        assert f"<label>{words} <input" in page
    for code in finance.HEADLINE_FIGURES:
        assert f"<dt>{code}</dt>" not in page and f"<label>{code} " not in page


def test_every_bad_model_field_is_named(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {
            "financialCase": {
                "builtin": {
                    "currency": "EURO",
                    "discountRatePct": 150,
                    "horizonYears": 3,
                    "lines": [
                        {"year": 0, "cost": -5, "benefit": 0},
                        {"year": 0, "cost": 1, "benefit": 1},
                        {"year": 9, "cost": 1, "benefit": 1},
                        {"year": 1, "cost": "lots", "benefit": 1},
                    ],
                },
                "attached": {"url": "ftp://files.example.com/x", "irr": "high"},
                "colour": "red",
            }
        },
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {
        "financialCase.builtin.currency",
        "financialCase.builtin.discountRatePct",
        "financialCase.builtin.lines[0].cost",
        "financialCase.builtin.lines[1].year",
        "financialCase.builtin.lines[2].year",
        "financialCase.builtin.lines[3].cost",
        "financialCase.attached.url",
        "financialCase.attached.irr",
        "financialCase.colour",
    }


def test_clean_keeps_stored_parts_not_sent():
    errors = FieldErrors()
    stored = finance.stamped(
        {**finance.storable(None), "boardPaperPageId": "12", "builtin": model(TEXTBOOK)}, None
    )
    merged = finance.clean({"mode": "none"}, stored, errors)
    assert not errors
    assert merged["mode"] == "none"
    assert merged["boardPaperPageId"] == "12"
    assert merged["builtin"]["lines"] == model(TEXTBOOK)["lines"]
