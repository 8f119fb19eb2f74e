"""The investment pages of proposals and the scoring model: who sees them (site admin,
governance group, lead, sponsor, editor, viewer, outsider, anonymous), scoring through the
form (audited, all or none, values kept on a refusal), a new model version through the form,
hostile values answered 4xx in words, the empty states, and the ranked list's queries
constant in the number of proposals."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.models import AuditEntry
from investment import services
from investment.models import Criterion, ModelVersion, Score
from tests.investment.conftest import criterion, make_project, phased, proposal

PAGES = ["/investment/", "/investment/model/", "/investment/decisions/"]
PROPOSAL = "/investment/proposals/ALPHA/"


@pytest.fixture
def scored(model, governed):
    proposal(governed.project)
    phased(governed.project, {"2027-01": 100, "2028-01": 50})
    return governed


@pytest.mark.parametrize(
    ("role", "governor", "reads_proposal"),
    [
        # Once a governance group is set, a site admin outside it views no project (the view
        # rule): the board's pages answer them, each project's scores are hidden.
        ("site_admin", True, False),
        ("pmo", True, True),
        ("lead", False, True),
        ("sponsor", False, True),
        ("editor", False, False),
        ("viewer", False, False),
        ("outsider", False, False),
    ],
)
def test_who_sees_which_page(scored, client_for, role, governor, reads_proposal):
    client = client_for(getattr(scored, role))
    for path in PAGES:
        assert client.get(path).status_code == (200 if governor else 404), path
    assert client.get(PROPOSAL).status_code == (200 if reads_proposal else 404)
    home = client.get("/").content.decode()
    assert ('href="/investment/"' in home) == governor


def test_anonymous_is_sent_to_sign_in(scored, client_for):
    client = client_for(None)
    for path in [*PAGES, PROPOSAL]:
        response = client.get(path)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    response = client.post(PROPOSAL + "score/", {"value-strategy": "3", "reason-strategy": "x"})
    assert response.status_code == 302 and not Score.objects.exists()


def test_the_ranked_list_shows_the_version_cost_and_people(scored, client_for):
    services.score_set(
        caller=_caller(scored.pmo, scored.project),
        data={"criterion": "strategy", "value": 4, "reason": "Core to the plan"},
    )
    _new_version(scored)
    html = client_for(scored.pmo).get("/investment/").content.decode()
    assert "ALPHA" in html and "Alpha programme" in html
    assert "scored under an older version (v1; v2 is in force)" in html
    assert "2027:" in html and "2028:" in html
    assert "Lena Lead" in html and "Sam Sponsor" in html
    assert 'aria-current="page">Investment<' in html


def test_the_sponsor_scores_through_the_form_audited(scored, client_for):
    client = client_for(scored.sponsor)
    page = client.get(PROPOSAL).content.decode()
    assert "Score this proposal" in page and 'name="value-strategy"' in page
    assert 'name="value-adoption"' not in page  # a data criterion is read, never scored
    response = client.post(
        PROPOSAL + "score/", {"value-strategy": "4", "reason-strategy": "Core to the plan"}
    )
    assert response.status_code == 302
    score = Score.objects.get()
    assert (score.value, score.created_by_account_id) == (4, scored.sponsor.account_id)
    assert AuditEntry.objects.filter(kind="investment.scored", project_key="ALPHA").count() == 1
    client.post(PROPOSAL + "score/", {"value-strategy": "2", "reason-strategy": "Less so now"})
    page = client.get(PROPOSAL).content.decode()
    assert "Less so now" in page and "Core to the plan" in page  # the earlier one, kept
    assert Score.objects.filter(superseded_by__isnull=False).count() == 1


def test_the_lead_reads_but_does_not_score(scored, client_for):
    client = client_for(scored.lead)
    page = client.get(PROPOSAL).content.decode()
    assert "Scores under version 1" in page and "Score this proposal" not in page
    assert client.post(PROPOSAL + "score/", {"value-strategy": "3"}).status_code == 403
    assert not Score.objects.exists()


def test_a_refused_row_records_nothing_and_keeps_what_was_typed(scored, client_for):
    client = client_for(scored.pmo)
    services.model_version_create(
        user=scored.pmo,
        data={
            "why": "Two criteria a person scores",
            "criteria": [criterion("strategy", weight=3), criterion("reach", weight=1)],
        },
    )
    response = client.post(
        PROPOSAL + "score/",
        {
            "value-strategy": "4",
            "reason-strategy": "Typed with care",
            "value-reach": "3",
            "reason-reach": "",
        },
    )
    html = response.content.decode()
    assert response.status_code == 422
    assert "Nothing was recorded." in html and "Reach: " in html
    assert "Typed with care" in html
    assert not Score.objects.exists()
    empty = client.post(PROPOSAL + "score/", {})
    assert empty.status_code == 422 and "at least one criterion" in empty.content.decode()


HOSTILE = {
    "NUL": "a\x00b",
    "U+FFFE": "a\ufffeb",
    "NaN": "NaN",
    "10^400": "1e400",
    "5,000 digits": "9" * 5000,
    "2^63": str(2**63),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_values_over_the_score_form_answer_4xx_in_words(scored, client_for, name):
    client = client_for(scored.pmo)
    value = HOSTILE[name]
    sent = [{"value-strategy": value, "reason-strategy": "fine"}]
    if name in ("NUL", "U+FFFE"):  # the others are a fine reason, as text
        sent.append({"value-strategy": "3", "reason-strategy": value})
    for data in sent:
        response = client.post(PROPOSAL + "score/", data)
        assert 400 <= response.status_code < 500, (name, data)
        html = response.content.decode()
        # A character no text holds is refused for the whole form before the page reads it.
        assert "Nothing was recorded." in html or "character" in html
    assert not Score.objects.exists()


def test_lone_surrogates_and_10_mb_are_refused_in_words(scored, client_for):
    client = client_for(scored.pmo)
    body = b"value-strategy=3&reason-strategy=%ED%A0%80"
    response = client.post(
        PROPOSAL + "score/", body, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code < 500
    big = client.post(
        "/investment/model/versions/",
        {"why": "x" * (10 * 1024 * 1024), "row": ["0"], "c0-key": "strategy"},
    )
    assert 400 <= big.status_code < 500
    assert ModelVersion.objects.count() == 1


def _caller(user, project):
    from governance.permissions import caller_for

    return caller_for(user, project)


def _form(version_criteria, **changes):
    """The new-version form as the page renders it, with `changes` over it."""
    data = {"row": [], "why": ""}
    for i, c in enumerate(version_criteria):
        data["row"].append(str(i))
        data[f"c{i}-key"] = c.key
        data[f"c{i}-name"] = c.name
        data[f"c{i}-measures"] = c.measures
        for n, words in enumerate(c.points, 1):
            data[f"c{i}-point{n}"] = words
        data[f"c{i}-weight"] = str(c.weight)
        data[f"c{i}-source"] = c.source
        data[f"c{i}-thresholds"] = ", ".join(str(t) for t in (c.thresholds or []))
    data.update(changes)
    return data


def _new_version(cast):
    version = ModelVersion.objects.order_by("-number").first()
    return services.model_version_create(
        user=cast.pmo,
        data={
            "why": "Strategy weighs more",
            "criteria": [
                {**services.criterion_to_dict(c), "weight": c.weight + 1}
                for c in version.criteria.all()
            ],
        },
    )


def test_a_new_version_through_the_form_keeps_old_scores(scored, client_for):
    services.score_set(
        caller=_caller(scored.pmo, scored.project),
        data={"criterion": "strategy", "value": 4, "reason": "Core"},
    )
    client = client_for(scored.pmo)
    page = client.get("/investment/model/").content.decode()
    assert "Make a new version" in page and 'name="c0-weight"' in page
    current = list(Criterion.objects.filter(version__number=1).order_by("position"))
    n = len(current)
    form = _form(
        current,
        **{
            "c0-weight": "5",
            "c1-remove": "1",
            "why": "Strategy matters more; adoption is read elsewhere",
            f"c{n}-new": "1",
            f"c{n}-name": "Customer reach",
            f"c{n}-measures": "How many customers",
            **{f"c{n}-point{p}": f"Reach {p}" for p in range(1, 6)},
            f"c{n}-weight": "2",
            f"c{n}-source": "person",
        },
    )
    form["row"].append(str(n))
    response = client.post("/investment/model/versions/", form)
    assert response.status_code == 302
    version = ModelVersion.objects.get(number=2)
    keys = [(c.key, c.weight) for c in version.criteria.order_by("position")]
    assert keys == [("strategy", 5), ("customer-reach", 2)]
    assert Score.objects.get().version.number == 1  # never rewritten
    assert AuditEntry.objects.filter(kind="investment.model_version_created").count() == 2
    page = client.get("/investment/model/").content.decode()
    assert "Strategy matters more" in page and "Customer reach" in page


def test_a_refused_version_keeps_what_was_typed(scored, client_for):
    client = client_for(scored.pmo)
    current = list(Criterion.objects.filter(version__number=1).order_by("position"))
    for weight in ("NaN", "1e400", "9" * 5000, "0", "-1", str(2**63)):
        form = _form(current, **{"c0-weight": weight, "why": "Typed why"})
        response = client.post("/investment/model/versions/", form)
        html = response.content.decode()
        assert response.status_code == 422, weight
        assert "No version was made." in html and "Strategy" in html and "Typed why" in html
    form = _form(current, why="")
    response = client.post("/investment/model/versions/", form)
    assert response.status_code == 422 and "Why: " in response.content.decode()
    assert ModelVersion.objects.count() == 1


def test_the_non_governors_cannot_make_a_version(scored, client_for):
    current = list(Criterion.objects.filter(version__number=1))
    for role in ("lead", "sponsor", "viewer"):
        client = client_for(getattr(scored, role))
        response = client.post("/investment/model/versions/", _form(current, why="x"))
        assert response.status_code == 404
    assert ModelVersion.objects.count() == 1


def test_the_empty_states(governed, client_for):
    client = client_for(governed.pmo)
    html = client.get("/investment/").content.decode()
    assert "No scoring model yet" in html and "No proposals to rank" in html
    assert "No scoring model yet" in client.get("/investment/model/").content.decode()
    assert "No portfolio decision yet" in client.get("/investment/decisions/").content.decode()
    page = client_for(governed.sponsor).get(PROPOSAL).content.decode()
    assert "No criteria to score against" in page


def test_the_decision_log_shows_the_choice(scored, client_for):
    scenario = services.scenario_create(
        user=scored.pmo, data={"name": "Plan A", "budgetByYear": {"2027": 1000}}
    )
    services.scenario_choose(
        user=scored.pmo,
        scenario_id=scenario.pk,
        data={"minutesRef": {"title": "Board minutes", "url": "https://wiki.example/m"}},
        projects=[scored.project],
    )
    client = client_for(scored.pmo)
    html = client.get("/investment/decisions/").content.decode()
    assert "Plan A" in html and "Board minutes" in html and "Priya PMO" in html
    assert "prioritised in Plan A" in client.get("/investment/").content.decode()


def _queries(client):
    client.get("/investment/")
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/investment/").status_code == 200
    return len(captured)


def test_the_ranked_list_reads_a_constant_number_of_queries(scored, client_for):
    client = client_for(scored.pmo)
    keys = ["BETA", "GAMMA"]
    for key in keys:
        project = make_project(key, scored, sponsor=scored.sponsor)
        proposal(project)
        phased(project, {"2027-03": 10})
    three = _queries(client)
    for n in range(9):
        project = make_project(f"P{n}X", scored, sponsor=scored.sponsor)
        proposal(project, status="Draft")
        phased(project, {"2027-03": 10, "2028-04": 5})
        services.score_set(
            caller=_caller(scored.pmo, project),
            data={"criterion": "strategy", "value": 1 + n % 5, "reason": "ok"},
        )
    assert "P8X" in client.get("/investment/").content.decode()
    assert _queries(client) == three


def test_a_refusal_names_the_criterion_of_the_row_it_is_about(scored, client_for):
    """A new row with only a point typed is sent (and refused); a later new row's refusal
    still names that later row, not its neighbour."""
    client = client_for(scored.pmo)
    current = list(Criterion.objects.filter(version__number=1).order_by("position"))
    n = len(current)
    form = _form(
        current,
        **{
            "why": "Two new rows",
            f"c{n}-new": "1",
            f"c{n}-point1": "Only a point",
            f"c{n}-source": "person",
            f"c{n + 1}-new": "1",
            f"c{n + 1}-name": "Speed",
            f"c{n + 1}-weight": "abc",
            f"c{n + 1}-source": "person",
        },
    )
    form["row"] += [str(n), str(n + 1)]
    response = client.post("/investment/model/versions/", form)
    html = response.content.decode()
    assert response.status_code == 422
    assert "Speed: weight:" in html
    assert "Speed: name:" not in html
    assert f"criterion {n + 1}: name:" in html  # the row with only a point, by its place
    assert ModelVersion.objects.count() == 1


def test_the_decision_log_links_only_the_projects_the_viewer_views(scored, client_for):
    scenario = services.scenario_create(
        user=scored.pmo, data={"name": "Plan A", "budgetByYear": {"2027": 1000}}
    )
    services.scenario_choose(
        user=scored.pmo,
        scenario_id=scenario.pk,
        data={"minutesRef": {"title": "Board minutes"}},
        projects=[scored.project],
    )
    shown = client_for(scored.pmo).get("/investment/decisions/").content.decode()
    assert "/investment/proposals/ALPHA/" in shown and "you cannot see" not in shown
    # Once a governance group is set, a site admin outside it views no project.
    hidden = client_for(scored.site_admin).get("/investment/decisions/").content.decode()
    assert "Plan A" in hidden and "1 you cannot see" in hidden
    assert "ALPHA" not in hidden
