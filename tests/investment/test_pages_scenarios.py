"""The scenario pages: governors only (everyone else, lead and sponsor included, 404); the
list with its create form, a scenario's cut-line with each year's fit and the totals, the
move preview, edit, copy, delete and the board's choice through the pages (audited), the
chosen scenario kept, the comparison of two or three, hostile values refused in words with
what was typed kept, and a constant number of queries whatever the proposals."""

from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from governance import cleaning
from governance.models import AuditEntry
from investment import services
from investment.models import PortfolioDecision, Scenario
from tests.factories import ProjectFactory, UserFactory
from tests.investment.conftest import (
    builtin,
    caller,
    make_project,
    phased,
    proposal,
    steering,
    three_proposals,
)


@pytest.fixture
def three(model, governed):
    return three_proposals(governed)


ROLES = ["outsider", "viewer", "editor", "lead", "sponsor", "site_admin", "pmo"]
GOVERNORS = {"site_admin", "pmo"}


def _scenario(governed, name="Plan", **data):
    return services.scenario_create(
        user=governed.pmo,
        data={"name": name, "budgetByYear": {"2027": 100, "2028": 40}, **data},
    )


def page_url(scenario, name="investment:scenario"):
    return reverse(name, args=[scenario.pk])


def form(**changes):
    body = {
        "name": "Growth",
        "notes": "",
        "budgetMode": "year",
        "year-0": "2027",
        "amount-0": "100",
        "year-1": "2028",
        "amount-1": "40",
        "budgetTotal": "",
    }
    body.update(changes)
    return body


@pytest.mark.django_db
@pytest.mark.parametrize("who", ROLES)
def test_only_governors_reach_the_scenario_pages(three, governed, client_for, who):
    scenario = _scenario(governed)
    other = _scenario(governed, name="Other")
    client = client_for(getattr(governed, who))
    compare = f"{reverse('investment:compare')}?ids={scenario.pk}&ids={other.pk}"
    for url in (reverse("investment:scenarios"), page_url(scenario), compare):
        expected = 200 if who in GOVERNORS else 404
        assert client.get(url).status_code == expected, (who, url)
    for name in ("scenario-copy", "scenario-delete", "scenario-choose", "scenario-edit"):
        response = client.post(page_url(scenario, f"investment:{name}"), {"name": "x"})
        if who not in GOVERNORS:
            assert response.status_code == 404, (who, name)
    if who not in GOVERNORS:
        assert client.post(reverse("investment:scenarios"), form()).status_code == 404
        assert Scenario.objects.count() == 2


def test_anonymous_is_sent_to_sign_in(three, governed, client):
    scenario = _scenario(governed)
    assert client.get(page_url(scenario)).status_code == 302


def test_the_empty_state_and_create_through_the_page(governed, client_for, three):
    client = client_for(governed.pmo)
    page = client.get(reverse("investment:scenarios")).content.decode()
    assert "No scenario yet" in page and "Create the scenario" in page
    body = form(selection=["AAA", "BBB"], mustHaves=["BBB"])
    response = client.post(reverse("investment:scenarios"), body)
    assert response.status_code == 302
    created = Scenario.objects.get(name="Growth")
    assert created.selection == ["AAA", "BBB"] and created.must_haves == ["BBB"]
    assert created.budget_by_year == {"2027": 100.0, "2028": 40.0}
    assert AuditEntry.objects.filter(kind="investment.scenario_created").exists()
    listing = client.get(reverse("investment:scenarios")).content.decode()
    assert "Growth" in listing and "2027: 100" in listing
    total = form(name="Total", budgetMode="total", budgetTotal="500")
    assert client.post(reverse("investment:scenarios"), total).status_code == 302
    assert Scenario.objects.get(name="Total").budget_total == 500


def test_the_cut_line_in_words_with_each_years_fit_and_totals(three, governed, client_for):
    scenario = _scenario(governed)
    page = client_for(governed.pmo).get(page_url(scenario)).content.decode()
    # A (60 in 2027) fits; B (30 in 2027, 50 in 2028) fits 2027 and not 2028: the line.
    assert "Cut-line:" in page and "the budget runs out here: 1 above, 2 below" in page
    assert "1 above the line, 2 below; the first below is BBB" in page
    row = page.index('<tr class="cut-line">', page.index("<tbody>"))
    assert page.index("AAA", row - 2000) < row < page.index("BBB", row)
    assert "fits" in page and "does not fit" in page and "no budget" not in page
    assert "Above the line (1)" in page and "Below the line (2)" in page
    assert 'class="cut-line"' in page
    assert 'place-above">Above<span class="visually-hidden"> the line</span>' in page
    assert "Cost per year above the line against the budget" in page and "<svg" in page
    assert "Show as a table" in page


def test_the_move_preview_and_back(three, governed, client_for):
    scenario = _scenario(governed)
    client = client_for(governed.pmo)
    page = client.get(page_url(scenario) + "?move=CCC").content.decode()
    assert "If CCC moved above the line" in page and "After the move" in page
    assert "Back to the scenario" in page
    out = client.get(page_url(scenario) + "?move=aaa").content.decode()
    assert "If AAA moved below the line" in out and "No other project joins" in out
    missing = client.get(page_url(scenario) + "?move=ZZZ")
    assert missing.status_code == 404 and "ZZZ is not in this scenario" in missing.content.decode()
    assert Scenario.objects.get(pk=scenario.pk).revision == 1  # nothing saved


def test_edit_copy_delete_through_the_pages_audited(three, governed, client_for):
    scenario = _scenario(governed)
    client = client_for(governed.pmo)
    edit = page_url(scenario, "investment:scenario-edit")
    shown = client.get(edit).content.decode()
    assert 'name="revision" value="1"' in shown and 'value="2027"' in shown
    response = client.post(edit, form(name="Plan B", revision="1", mustHaves=["CCC"]))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.name == "Plan B" and scenario.revision == 2 and scenario.must_haves == ["CCC"]
    assert AuditEntry.objects.filter(kind="investment.scenario_updated").exists()
    stale = client.post(edit, form(name="Old", revision="1"))
    assert (
        stale.status_code == 412 and "changed since this form was opened" in stale.content.decode()
    )
    copied = client.post(page_url(scenario, "investment:scenario-copy"), {"name": "Plan C"})
    copy = Scenario.objects.get(name="Plan C")
    assert copied.status_code == 302 and copy.copy_of_id == scenario.pk
    assert AuditEntry.objects.filter(kind="investment.scenario_copied").exists()
    gone = client.post(page_url(copy, "investment:scenario-delete"), {"revision": "1"})
    assert gone.status_code == 302 and not Scenario.objects.filter(pk=copy.pk).exists()
    assert AuditEntry.objects.filter(kind="investment.scenario_deleted").exists()


def test_choosing_confirms_then_records_and_the_chosen_scenario_is_kept(
    three, governed, client_for
):
    scenario = _scenario(governed)
    client = client_for(governed.pmo)
    choose = page_url(scenario, "investment:scenario-choose")
    missing = client.post(choose, {"minutesTitle": "", "revision": "1"})
    assert missing.status_code == 422 and "Nothing was recorded" in missing.content.decode()
    # Refusals name the fields as the form labels them.
    assert "Minutes of the board&#x27;s meeting" in missing.content.decode()
    assert "Steering minutes" not in missing.content.decode()
    bad_url = client.post(
        choose, {"minutesTitle": "Board", "minutesUrl": "ftp://x", "revision": "1"}
    ).content.decode()
    assert "Address of the minutes:" in bad_url and "Steering minutes" not in bad_url
    first = client.post(choose, {"minutesTitle": "Board 12 March", "revision": "1"})
    page = first.content.decode()
    assert first.status_code == 200 and "Confirm the board's choice" in page
    assert "Yes, record the choice" in page and not PortfolioDecision.objects.exists()
    assert 'name="confirmedKeys" value="AAA"' in page  # what was confirmed is posted back
    body = {
        "minutesTitle": "Board 12 March",
        "revision": "1",
        "confirmed": "yes",
        "confirmedKeys": ["AAA"],
    }
    assert client.post(choose, body).status_code == 302
    decision = PortfolioDecision.objects.get()
    assert decision.minutes_ref == {"title": "Board 12 March"}
    assert AuditEntry.objects.filter(kind="investment.scenario_chosen").exists()
    shown = client.get(page_url(scenario)).content.decode()
    assert "The board chose this scenario" in shown and "Chosen by the board" in shown
    assert "scenario-edit" not in shown and "Delete this scenario" not in shown
    edit = client.post(page_url(scenario, "investment:scenario-edit"), form(revision="1"))
    assert edit.status_code == 409 and "can no longer be changed" in edit.content.decode()
    delete = client.post(page_url(scenario, "investment:scenario-delete"), {"revision": "1"})
    assert delete.status_code == 409 and "The board chose Plan" in delete.content.decode()
    again = client.post(choose, body)
    assert again.status_code == 409 and PortfolioDecision.objects.count() == 1
    assert Scenario.objects.get(pk=scenario.pk).name == "Plan"


def test_compare_two_and_three_and_refusals(three, governed, client_for):
    a = _scenario(governed, name="Narrow")
    b = services.scenario_create(user=governed.pmo, data={"name": "Wide", "budgetTotal": 1000})
    c = _scenario(governed, name="Third", mustHaves=["CCC"])
    client = client_for(governed.pmo)
    url = reverse("investment:compare")
    two = client.get(url, {"ids": [str(a.pk), str(b.pk)]})
    page = two.content.decode()
    assert two.status_code == 200 and "Narrow" in page and "Wide" in page
    assert "2 projects stand above the line in one scenario and not in another" in page
    three_page = client.get(url, {"ids": [str(a.pk), str(b.pk), str(c.pk)]})
    assert three_page.status_code == 200 and "Third" in three_page.content.decode()
    one = client.get(url, {"ids": [str(a.pk)]})
    assert one.status_code == 422 and "Choose two or three" in one.content.decode()
    four = client.get(url, {"ids": [str(a.pk), str(b.pk), str(c.pk), "x"]})
    assert four.status_code == 422 and "this asks for 4" in four.content.decode()
    unknown = client.get(url, {"ids": [str(a.pk), "not-a-scenario"]})
    assert unknown.status_code == 404 and "does not exist" in unknown.content.decode()
    nul = client.get(url, {"ids": [str(a.pk), "\x00"]})
    assert 400 <= nul.status_code < 500
    # From a scenario's page: that one ticked, a hint to pick more, no refusal.
    start = client.get(url, {"ids": [str(a.pk)], "from": "scenario"})
    assert start.status_code == 200 and "Tick one or two more" in start.content.decode()
    assert f'value="{a.pk}" checked' in start.content.decode()
    empty = client.get(url)
    assert empty.status_code == 200 and "Choose two or three scenarios" in empty.content.decode()


HOSTILE = [
    "\x00",
    "a\x00b",
    "\ud800",
    "a\ufffeb",
    "NaN",
    str(2**63),
    "1" + "0" * 400,
    "9" * 5000,
    "9999",
    "9999-12-31",
    "x" * 10_000_000,
]


def raw(body):
    """The form as a browser sends it: UTF-8 bytes (a lone surrogate as such bytes)."""
    parts = []
    for name, value in body.items():
        for item in value if isinstance(value, list) else [value]:
            data = item.encode("utf-8", "surrogatepass")
            parts.append(f"{quote(name)}={quote(data)}")
    return "&".join(parts)


def post(client, url, body):
    return client.post(url, raw(body), content_type="application/x-www-form-urlencoded")


FIELDS = ["name", "notes", "year-0", "amount-0", "budgetTotal", "selection", "mustHaves"]


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_values_over_every_form_answer_in_words(three, governed, client_for, value):
    scenario = _scenario(governed)
    client = client_for(governed.pmo)
    for field in FIELDS:
        body = form(name=f"Hostile {field}")
        if field == "budgetTotal":
            body.update(budgetMode="total")
        body[field] = [value] if field in ("selection", "mustHaves") else value
        for url, extra in (
            (reverse("investment:scenarios"), {}),
            (page_url(scenario, "investment:scenario-edit"), {"revision": "1"}),
        ):
            revision = Scenario.objects.get(pk=scenario.pk).revision
            response = post(client, url, {**body, **extra, "revision": str(revision)})
            if response.status_code == 302:  # harmless as text (a name, a note, an amount)
                assert field in ("name", "notes") or (
                    value == "9999" and field in ("amount-0", "budgetTotal")
                )
                continue
            if len(value) > 5_000_000:  # over the form's limit: refused before any view
                assert response.status_code == 400 and "too large" in response.content.decode()
                continue
            page = response.content.decode()
            assert 400 <= response.status_code < 500, (field, response.status_code)
            if cleaning.text_error(value):  # the site's rule, before any view: named, 422
                assert response.status_code == 422, field
                assert "Back to my projects" in page or "Nothing was saved" in page, field
                continue
            assert "Nothing was saved" in page or "field-error" in page, field
            if field == "name" and len(value) < 1000 and value.isprintable():
                assert value in page  # what was typed is kept
    assert Scenario.objects.filter(name__startswith="Hostile").count() <= 4
    for field in ("name", "minutesTitle", "minutesUrl", "madeOn", "rationale"):
        target = "investment:scenario-copy" if field == "name" else "investment:scenario-choose"
        body = {"minutesTitle": "Board", "revision": "1", "confirmed": "yes", field: value}
        response = post(client, page_url(scenario, target), body)
        assert response.status_code < 500, (field, response.status_code)
        if cleaning.text_error(value) or len(value) > 5_000_000:
            # A lone surrogate reaches the page as U+FFFD (the form's bytes are decoded):
            # harmless text in a name or a rationale.
            harmless = value == "\ud800" and field in ("name", "rationale", "minutesTitle")
            assert response.status_code in (400, 422) or harmless, field
        elif field in ("madeOn", "minutesUrl") and response.status_code != 302:
            assert 400 <= response.status_code < 500 and "Nothing was recorded" in (
                response.content.decode()
            )
    typed = quote(value[:5000].encode("utf-8", "surrogatepass"))
    move = client.get(f"{page_url(scenario)}?move={typed}")
    assert move.status_code in (404, 422)


def test_the_scenario_page_reads_in_the_same_queries_for_3_and_12(
    three, governed, client_for, model
):
    scenario = _scenario(governed, name="All")
    client = client_for(governed.pmo)
    client.get(page_url(scenario))

    def count():
        with CaptureQueriesContext(connection) as captured:
            assert client.get(page_url(scenario)).status_code == 200
        return len(captured)

    few = count()
    for n in range(9):
        project = make_project(f"MORE{n}", governed, sponsor=governed.sponsor)
        proposal(project, financial_case=builtin((0, 1, 0), (1, 0, 10)))
        phased(project, {"2027-05": 5, "2028-05": 5})
        services.score_set(
            caller=caller(governed.pmo, project),
            data={"criterion": "strategy", "value": 2, "reason": "fine"},
        )
    assert count() == few


def test_editing_keeps_the_projects_the_editor_cannot_see(three, governed, client_for):
    """A governor who views none of the scenario's projects renames it: the selection and the
    must-haves they cannot see stay as they were (the form says so), never "every proposal"."""
    scenario = _scenario(governed, selection=["AAA", "BBB"], mustHaves=["BBB"])
    # Once a governance group is set, a site admin outside it views no project.
    client = client_for(governed.site_admin)
    edit = page_url(scenario, "investment:scenario-edit")
    shown = client.get(edit).content.decode()
    assert "2 projects you cannot see stay selected" in shown
    assert 'value="AAA"' not in shown and 'value="BBB"' not in shown
    response = client.post(edit, form(name="Renamed", revision="1"))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.name == "Renamed"
    assert scenario.selection == ["AAA", "BBB"] and scenario.must_haves == ["BBB"]
    # A site admin outside the governance group on SEEN's steering committee views SEEN
    # only: ticking it adds it; AAA and BBB, unseen, stay (BBB a must-have).
    partial = UserFactory(username="admin_partial", admin=True)
    seen = ProjectFactory(key="SEEN", lead=governed.lead, browsers=[partial, governed.pmo])
    steering(seen, partial)
    proposal(seen)
    viewer = client_for(partial)
    shown = viewer.get(edit).content.decode()
    assert "2 projects you cannot see stay selected" in shown and 'value="SEEN"' in shown
    response = viewer.post(edit, form(name="Renamed", revision="2", selection=["SEEN"]))
    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.selection == ["SEEN", "AAA", "BBB"] and scenario.must_haves == ["BBB"]


def test_a_cell_shows_the_cost_its_fit_is_of(model, governed, client_for):
    """A proposal whose only cost is unphased (its financial case's total) counts it in the
    first budget year: that year's cell shows the amount and its fit, never "—"."""
    only = make_project("FIN", governed, sponsor=governed.sponsor)
    proposal(only, financial_case=builtin((0, 200, 0), (1, 0, 90)))
    scenario = _scenario(governed, name="Unphased", selection=["FIN"])
    page = client_for(governed.pmo).get(page_url(scenario)).content.decode()
    row = page[page.index("FIN", page.index("<tbody>")) :]
    row = row[: row.index("</tr>")]
    cells = row.split('<td class="num" ')
    year_2027 = next(c for c in cells if "does not fit" in c)
    assert "200" in year_2027 and "—" not in year_2027


def test_the_confirmation_lists_what_the_choice_records_and_refuses_a_change(
    three, governed, client_for
):
    """The confirmation names the proposals the service would record (one rule,
    `selectors.prioritised`) and posts them; if a rescore changed them meanwhile, the choice
    is refused in words (409) and nothing is recorded."""
    scenario = _scenario(governed)
    client = client_for(governed.pmo)
    choose = page_url(scenario, "investment:scenario-choose")
    confirm = client.post(choose, {"minutesTitle": "Board", "revision": "1"}).content.decode()
    assert "1 proposal will be prioritised: AAA" in confirm
    assert 'name="confirmedKeys" value="AAA"' in confirm
    # Meanwhile CCC is rescored above AAA: C (20 in 2027) then A (60) then B fit differently.
    services.score_set(
        caller=caller(governed.pmo, three["AAA"]),
        data={"criterion": "strategy", "value": 1, "reason": "Rescored"},
    )
    body = {"minutesTitle": "Board", "revision": "1", "confirmed": "yes", "confirmedKeys": ["AAA"]}
    refused = client.post(choose, body)
    html = refused.content.decode()
    assert refused.status_code == 409 and not PortfolioDecision.objects.exists()
    assert "changed since it was confirmed" in html
    assert "Confirm the board's choice" in html  # the new confirmation, to confirm anew


def test_the_edit_form_shows_amounts_as_typed(governed, client_for):
    scenario = services.scenario_create(
        user=governed.pmo,
        data={"name": "Years", "budgetByYear": {"2027": 1200000, "2028": 900000.5}},
    )
    page = client_for(governed.pmo).get(page_url(scenario, "investment:scenario-edit"))
    text = page.content.decode()
    assert page.status_code == 200
    assert 'value="1200000"' in text and 'value="900000.5"' in text
    assert "1200000.0" not in text


def test_the_selection_says_each_project_s_state(three, governed, client_for):
    """A project that is not a proposal is named with its approval state: a closed or killed
    one is not offered as running."""
    closed = make_project("CLO", governed)
    closed.approval_status = "Closed"
    closed.save(update_fields=["approval_status"])
    page = client_for(governed.pmo).get(reverse("investment:scenarios")).content.decode()
    row = page[page.index("CLO ") :]
    row = row[: row.index("</tr>")]
    assert "<td>Project, closed</td>" in row
    assert "Running project" not in page
    assert page.count("<td>Proposal</td>") == 3
