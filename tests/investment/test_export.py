"""A scenario's workbook as a board reads it (`investment:scenario-export`), read back with
openpyxl: the ranked rows with their costs per budget year, the cut-line as a row, the totals
and the budget, the scenario's name, model version and day; the scores with their reasons on
a second sheet. Governors only (404 for anyone else); hostile names written as text."""

import datetime as dt
import io
import uuid

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from investment.models import Scenario, Score
from investment.views.export import CUT_LINE
from tests.investment.test_services import _scenario, builtin, three  # noqa: F401

pytestmark = pytest.mark.django_db


def _url(scenario):
    return reverse("investment:scenario-export", args=[scenario.pk])


def _book(client, scenario):
    response = client.get(_url(scenario))
    assert response.status_code == 200, response
    assert response["Content-Disposition"].startswith('attachment; filename="scenario-')
    return load_workbook(io.BytesIO(b"".join(response.streaming_content)))


def _values(sheet):
    return [list(row) for row in sheet.iter_rows(values_only=True)]


def test_the_workbook_holds_the_ranked_rows_the_line_the_totals_and_the_budget(
    three,  # noqa: F811
    governed,
    client_for,
):
    scenario = _scenario(governed)
    book = _book(client_for(governed.pmo), scenario)
    assert book.sheetnames == ["Scenario", "Scores"]
    rows = _values(book["Scenario"])
    assert rows[0][:2] == ["Scenario", "Plan"]
    assert rows[1][:2] == ["Scoring model version", 1]
    assert rows[2][:2] == ["Exported on", dt.date.today().isoformat()]
    header = rows[5]
    assert header[:6] == ["Rank", "Project key", "Project", "Score", "Cost 2027", "Cost 2028"]
    at = {name: header.index(name) for name in header if name}
    body = rows[6:]
    keys = [r[1] for r in body]
    # A (60 in 2027) and B (30 + 50) fit 2027, but B does not fit 2028's 40: the line is
    # drawn after A; C stays below though it would fit.
    assert keys[:3] == ["AAA", CUT_LINE, "BBB"] and keys[3] == "CCC"
    aaa, bbb = body[0], body[2]
    assert (aaa[at["Rank"]], aaa[at["Line"]], aaa[at["Must-have"]]) == (1, "Above", "No")
    assert (aaa[at["Cost 2027"]], aaa[at["Cost"]]) == (60, 60)
    assert (bbb[at["Fits 2027"]], bbb[at["Fits 2028"]], bbb[at["Line"]]) == ("Yes", "No", "Below")
    total = next(r for r in body if str(r[1]).startswith("Total above the line"))
    assert total[1] == "Total above the line (1)" and total[at["Cost"]] == 60
    budget = next(r for r in body if r[1] == "Budget")
    assert (budget[at["Cost 2027"]], budget[at["Cost 2028"]]) == (100, 40)
    scores = _values(book["Scores"])
    assert scores[0][:4] == ["Project key", "Project", "Model version", "Criterion"]
    reasons = {(r[0], r[3]): r[8] for r in scores[1:]}
    assert reasons[("AAA", "Strategy")] == "AAA reason"
    assert reasons[("CCC", "Strategy")] == "CCC reason"
    # People and sources in words, as the pages show them: never an account id or a key.
    by = {(r[0], r[3]): (r[4], r[9]) for r in scores[1:]}
    source, scorer = by[("AAA", "Strategy")]
    assert source == "Scored by a person"
    assert scorer and scorer != governed.pmo.account_id


def test_every_row_above_the_line_puts_the_line_last(three, governed, client_for):  # noqa: F811
    scenario = Scenario.objects.create(name="Big", budget_total=10_000)
    body = _values(_book(client_for(governed.pmo), scenario)["Scenario"])[6:]
    assert [r[1] for r in body[:4]] == ["AAA", "BBB", "CCC", CUT_LINE]


@pytest.mark.parametrize("role", ["lead", "sponsor", "viewer", "outsider"])
def test_anyone_but_a_governor_gets_404(three, governed, client_for, role):  # noqa: F811
    scenario = _scenario(governed)
    assert client_for(getattr(governed, role)).get(_url(scenario)).status_code == 404


def test_an_unknown_scenario_is_404_and_the_anonymous_sign_in(three, governed, client_for):  # noqa: F811
    missing = reverse("investment:scenario-export", args=[uuid.uuid4()])
    assert client_for(governed.pmo).get(missing).status_code == 404
    scenario = _scenario(governed)
    assert client_for(None).get(_url(scenario)).status_code == 302
    # Not a UUID: no such page.
    assert client_for(governed.pmo).get("/investment/scenarios/12/export.xlsx").status_code == 404


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1:A9)", "'+SUM(A1:A9)"),
        ("@cmd", "'@cmd"),
        ("-2+3", "'-2+3"),
        ("Bell\x07and\x1bescape", "Bell\ufffdand\ufffdescape"),
        ("\tTab first", "'\tTab first"),
        ("\ufffe noncharacter", "\ufffd noncharacter"),
    ],
)
def test_hostile_names_are_written_as_text(three, governed, client_for, name, written):  # noqa: F811
    scenario = _scenario(governed)
    # Stored before the rules refused them (the services refuse control characters), and a
    # score's reason beside it.
    Scenario.objects.filter(pk=scenario.pk).update(name=name)
    Score.objects.filter(project__key="AAA").update(reason=name)
    book = _book(client_for(governed.pmo), Scenario.objects.get(pk=scenario.pk))
    assert _values(book["Scenario"])[0][1] == written
    cells = [c for row in _values(book["Scenario"]) for c in row if isinstance(c, str)]
    cells += [c for row in _values(book["Scores"]) for c in row if isinstance(c, str)]
    assert written in _values(book["Scores"])[1]  # AAA's reason
    assert not any(c.startswith(("=", "+", "@", "-")) for c in cells)
    assert not any(ch in c for c in cells for ch in "\x07\x1b\ufffe")
