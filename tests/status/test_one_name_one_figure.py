"""One name, one figure. The estimate at completion (EAC) is the cost dimension's forecast (the
work packages' forecasts, or the project manager's revised forecast) on every surface; earned
value's BAC / CPI is the cost-performance estimate, under its own name, and where both are given
every surface says how they differ. And no answer holds one key name with two different numbers:
a walk over the status API, the portfolio API, the published reports and the assistant's answers
of the whole demo fails on any such key."""

import csv
import io
import json
import re
from collections import defaultdict
from decimal import Decimal

import pytest
from django.utils.html import escape

from governance.models import User
from governance.permissions import caller_for
from governance.services import token_create
from status import services
from status.models import StatusReport

# Keys that are genuinely one per row of a list or a map of named records: not a figure's name.
PER_ROW = frozenset({"id", "revision"})

# BRIDGE: the packages' forecasts against the cost performance so far (the demo's figures).
BRIDGE_EAC = 948000
BRIDGE_ESTIMATE = 836122.38
SENTENCE = (
    "At the cost performance so far (BAC / CPI) the work would cost EUR\u00a0836,122.38; "
    "the work packages' forecasts put the estimate at completion (EAC) at EUR\u00a0948,000, "
    "EUR\u00a0111,877.62 more."
)


def clashes(answer, where: str = "") -> list[str]:
    """Every key of `answer` that holds two different numbers in one answer. Each element of a
    list is its own answer (a row: a work package, a portfolio row), walked the same way."""
    found: list[str] = []
    seen: dict[str, dict[float, str]] = defaultdict(dict)

    def walk(node, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here = f"{path}.{key}"
                if isinstance(value, bool) or value is None:
                    continue
                if isinstance(value, int | float) and key not in PER_ROW:
                    seen[key].setdefault(float(value), here)
                else:
                    walk(value, here)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                found.extend(clashes(item, f"{path}[{index}]"))

    walk(answer, where)
    for key, values in seen.items():
        if len(values) > 1:
            found.append(f"{key}: " + ", ".join(f"{p} = {v:g}" for v, p in values.items()))
    return found


def test_the_walk_finds_a_key_with_two_numbers():
    """The walk itself fails on the old clash (so a clean walk means something), and takes the
    rows of a list each alone."""
    old = {"figures": {"eac": 948000}, "earnedValue": {"eac": 836122.38}}
    assert clashes(old) == ["eac: .figures.eac = 948000, .earnedValue.eac = 836122"]
    rows = {"bac": 10, "workPackages": [{"bac": 4}, {"bac": 6}]}
    assert clashes(rows) == []
    assert clashes({"a": {"n": 1, "flag": True}, "b": {"n": 1, "flag": False}}) == []


def agent(client, headers, name, arguments):
    response = client.post(
        f"/api/v1/agent/actions/{name}",
        data=json.dumps({"arguments": arguments}),
        content_type="application/json",
        **headers,
    )
    assert response.status_code == 200, response.content
    return response.json()["result"]


@pytest.fixture
def priya(demo):
    return User.objects.get(username="priya")


@pytest.fixture
def pmo(priya, client_for):
    return client_for(priya)


@pytest.fixture
def bearer_headers(priya):
    _, raw = token_create(user=priya, name="test")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def test_no_answer_holds_one_name_with_two_numbers(pmo, client, bearer_headers):
    rows = pmo.get("/api/v1/portfolio").json()["items"]
    assert rows and clashes(rows) == []
    for row in rows:
        key = row["projectKey"]
        status = pmo.get(f"/api/v1/projects/{key}/status").json()
        assert clashes(status, key) == [], key
        reports = pmo.get(f"/api/v1/projects/{key}/status/reports").json()
        assert clashes(reports, key) == [], key
        for action in ("project_status", "project_overview"):
            answer = agent(client, bearer_headers, action, {"projectKey": key})
            assert clashes(answer, key) == [], (action, key)
    assert clashes(agent(client, bearer_headers, "portfolio_summary", {})) == []
    for report in StatusReport.objects.filter(state="Published"):
        assert clashes(report.snapshot, str(report.pk)) == []
    # The export: one heading, one column.
    header = next(
        csv.reader(
            io.StringIO(pmo.get("/portfolio/export/?format=csv").getvalue().decode("utf-8-sig"))
        )
    )
    assert len(set(header)) == len(header)


def test_bridge_tells_its_two_estimates_apart_on_every_surface(pmo, client, bearer_headers, priya):
    # The status API: `eac` is the forecast; the cost performance's estimate has its own name.
    status = pmo.get("/api/v1/projects/BRIDGE/status").json()
    assert status["figures"]["eac"] == BRIDGE_EAC
    assert status["drivers"]["costRag"]["figures"]["eac"] == BRIDGE_EAC
    earned = status["earnedValue"]
    assert "eac" not in earned and "eacAtypical" not in earned
    assert earned["costPerformanceEstimate"] == BRIDGE_ESTIMATE
    assert earned["estimatesCompared"] == SENTENCE
    assert "would cost" in earned["readings"]["costPerformanceEstimate"]

    # The status page: the sentence in the earned value block, each estimate by its name.
    page = pmo.get("/projects/BRIDGE/status/").content.decode()
    assert escape(SENTENCE) in page
    assert "Cost-performance estimate (" in page
    assert not re.search(r">\s*EAC\s*<", page)  # no figure headed bare "EAC" but the forecast

    # The portfolio: the API row, the page (the EAC cell's hover and the Why column), exports.
    row = next(
        r for r in pmo.get("/api/v1/portfolio").json()["items"] if r["projectKey"] == "BRIDGE"
    )
    assert row["eac"] == BRIDGE_EAC
    assert row["earnedValue"]["costPerformanceEstimate"] == BRIDGE_ESTIMATE
    assert row["earnedValue"]["estimatesCompared"] == SENTENCE
    pmo.post("/portfolio/columns/", {"columns": ["eac", "why"]})
    portfolio = pmo.get("/portfolio/").content.decode()
    escaped = escape(SENTENCE)
    assert f'title="{escaped}"' in portfolio
    assert f"<dt>Estimates</dt><dd>{escaped}</dd>" in portfolio
    export = pmo.get("/portfolio/export/?format=csv").getvalue().decode("utf-8-sig")
    header, *body = list(csv.reader(io.StringIO(export)))
    line = next(dict(zip(header, r, strict=True)) for r in body if r[0] == "BRIDGE")
    assert Decimal(line["Forecast: estimate at completion (EAC)"]) == BRIDGE_EAC
    estimate = line["Earned value: Cost-performance estimate (BAC / CPI)"]
    assert Decimal(estimate) == Decimal(str(BRIDGE_ESTIMATE))
    assert line["Estimates compared"] == SENTENCE
    assert not [h for h in header if re.search(r"\bEAC\b", h) and "estimate at completion" not in h]

    # A published report (and its PDF, rendered from the same page) says the same.
    project = status_project("BRIDGE")
    caller = caller_for(User.objects.get(account_id=project.lead_account_id), project)
    report = services.status_report_create(caller=caller, data={"title": "Estimates"})
    report = services.status_report_publish(caller=caller, report_id=report.pk)
    frozen = report.snapshot["status"]
    assert frozen["figures"]["eac"] == BRIDGE_EAC
    assert frozen["earnedValue"]["costPerformanceEstimate"] == BRIDGE_ESTIMATE
    url = f"/projects/BRIDGE/status/reports/{report.pk}/"
    html = pmo.get(url).content.decode()
    assert escape(SENTENCE) in html
    assert "Forecast: estimate at completion (EAC)" in html
    assert "Cost-performance estimate (BAC / CPI)" in html
    pdf = pmo.get(url + "?format=pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-")

    # The assistant's answer.
    answer = agent(client, bearer_headers, "project_status", {"projectKey": "BRIDGE"})
    assert answer["dimensions"]["cost"]["figures"]["eac"] == BRIDGE_EAC
    assert "eac" not in answer["earnedValue"]
    assert answer["earnedValue"]["costPerformanceEstimate"] == BRIDGE_ESTIMATE
    assert answer["earnedValue"]["estimatesCompared"] == SENTENCE


def status_project(key):
    from governance.models import Project

    return Project.objects.get(key=key)


# --- inherent and residual: a 4x4 risk treated down to 2x3 ------------------------------------

THRESHOLDS = {"riskAmberMinScore": 8, "riskRedMinScore": 15}


@pytest.mark.parametrize("score", [None, *range(1, 26)])
def test_one_function_colours_every_score_on_every_surface(score):
    """Every score from 1 to 25 (and none): the register's heat, a matrix cell's zone and the
    derived risk RAG of a project whose highest residual score it is all read `risk_zone`."""
    from governance import charts
    from governance.rag import risk_zone
    from registers.derive import risk_heat
    from status import derive

    zone = risk_zone(score, THRESHOLDS)
    assert risk_heat(score, THRESHOLDS) == zone.lower()
    if score is None:
        return
    cell = charts.cell_zone(score, THRESHOLDS["riskAmberMinScore"], THRESHOLDS["riskRedMinScore"])
    assert cell == {"Red": "high", "Amber": "medium", "Green": "low"}[zone]
    facts = derive.ProjectFacts(
        project=None,  # type: ignore[arg-type]
        status=None,  # type: ignore[arg-type]
        case=None,
        figures=derive.Figures(risks=1, open_risks=1, top_score=score),
    )
    assert derive.derive_risk(facts, THRESHOLDS).rag == zone


@pytest.fixture
def treated(cast):
    from governance.tracker.local import scripting
    from tests.agent.conftest import EVERYONE
    from tests.conftest import set_governance_group
    from tests.factories import RiskFactory

    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer", "sponsor", "pmo"])
    set_governance_group(EVERYONE)
    return RiskFactory(
        project=cast.project,
        title="Vendor exit",
        impact=4,
        likelihood=4,
        residual_impact=2,
        residual_likelihood=3,
    )


def test_a_treated_risk_reads_inherent_16_and_residual_6_everywhere(
    cast, treated, client_for, client, bearer
):
    lead = client_for(cast.lead)
    # The register: both scores, each labelled and coloured by its own zone.
    register = lead.get("/projects/ALPHA/registers/risks/").content.decode()
    assert ">Inherent score<" in register and ">Residual score<" in register
    assert re.search(
        'class="heat heat-red" title="Inherent: impact 4 \u00d7 likelihood 4[^"]*">16<', register
    )
    assert re.search(
        'class="heat heat-green" title="Residual: impact 2 \u00d7 likelihood 3[^"]*">6<', register
    )
    detail = lead.get(f"/projects/ALPHA/registers/risks/{treated.pk}/").content.decode()
    assert "<dt>Inherent score</dt>" in detail and "<dt>Residual score</dt>" in detail
    assert '<span class="heat heat-red">16</span>' in detail
    assert '<span class="heat heat-green">6</span>' in detail
    # The matrices: the inherent one places it at 4 x 4 (high), the residual one at 2 x 3 (low).
    inherent = register.split('id="risk-matrix-inherent"')[1].split("</figure>")[0]
    residual = register.split('id="risk-matrix-residual"')[1].split("</figure>")[0]
    assert "1 risk with impact 4 and likelihood 4 (inherent score 16, high)" in inherent
    assert "1 risk with impact 2 and likelihood 3 (residual score 6, low)" in residual

    # The status card and its API: the residual score is judged, the inherent one named.
    status = lead.get("/api/v1/projects/ALPHA/status").json()
    risk = status["drivers"]["riskRag"]
    assert risk["rag"] == "Green" and status["figures"]["topRiskScore"] == 6
    assert risk["summary"].startswith("1 open risk; the highest residual score is 6 ")
    driver = "Vendor exit: residual score 6 (inherent 16); its treatment holds it below 8."
    assert [d["text"] for d in risk["drivers"]] == [driver]
    page = lead.get("/projects/ALPHA/status/").content.decode()
    assert escape(risk["summary"]) in page and escape(driver) in page

    # The portfolio: the row, the export's labelled column, the matrices' tables.
    pmo = client_for(cast.pmo)
    row = next(
        r for r in pmo.get("/api/v1/portfolio").json()["items"] if r["projectKey"] == "ALPHA"
    )
    assert (row["topRiskScore"], row["topRiskZone"]) == (6, "Green")
    export = pmo.get("/portfolio/export/?format=csv").getvalue().decode("utf-8-sig")
    header, *body = list(csv.reader(io.StringIO(export)))
    line = next(dict(zip(header, r, strict=True)) for r in body if r[0] == "ALPHA")
    assert line["Top risk score (residual)"] == "6"
    pmo.post("/portfolio/columns/", {"columns": ["topRisk"]})
    portfolio = pmo.get("/portfolio/").content.decode()
    assert 'class="heat heat-green" title="The highest residual score">6<' in portfolio
    assert "Impact 4 \u00d7 likelihood 4 (inherent score 16)" in portfolio
    assert "Impact 2 \u00d7 likelihood 3 (residual score 6)" in portfolio

    # The assistant reads the same.
    answer = agent(client, bearer(cast.lead), "project_status", {"projectKey": "ALPHA"})
    assert answer["dimensions"]["risk"]["drivers"][0]["text"] == driver
    risks = agent(
        client, bearer(cast.lead), "list_register", {"register": "risks", "projectKey": "ALPHA"}
    )
    item = next(i for i in risks["items"] if i["title"] == "Vendor exit")
    assert (item["inherentScore"], item["score"]) == (16, 6)


def test_the_cost_lines_and_the_tolerance_are_named_apart(cast, client_for):
    """The cost card names the RAG line by its colour; the exception page names the tolerance
    and says the card's lines are other lines."""
    from tests.factories import WorkPackageFactory

    WorkPackageFactory(
        project=cast.project, name="Build", budget=Decimal(1000), budget_forecast=Decimal(1200)
    )
    lead = client_for(cast.lead)
    cost = lead.get("/api/v1/projects/ALPHA/status").json()["drivers"]["costRag"]["summary"]
    assert cost.endswith("above the Amber line at 10%.")
    assert "% line" not in cost
    page = lead.get("/projects/ALPHA/status/exception/").content.decode()
    assert "the Green line at 5%" in page and "the Amber line at 10%" in page
    from charter.models import BusinessCase

    BusinessCase.objects.update_or_create(
        project=cast.project, defaults={"tolerance_cost_percent": Decimal(5)}
    )
    page = lead.get("/projects/ALPHA/status/exception/").content.decode()
    assert "<dt>Cost tolerance</dt><dd>5% over the approved budget" in page
    assert "the Green line at 5%" in page  # the same figure, named apart
