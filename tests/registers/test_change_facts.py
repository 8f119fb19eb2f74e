"""A change request's facts read the same on every surface: its dimensions follow the impacts
until the person chooses them, and an approved change anchored to a work package is applied
to that package's baseline; the change's application state and the scope RAG agree on the
register page, the JSON API, the export, the status, the portfolio and the agent."""

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agent.catalogue import ensure_loaded
from registers.models import ChangeRequest
from tests.conftest import PMO_GROUP, set_governance_group

ensure_loaded()

CHANGES = "/api/v1/projects/ALPHA/changes"


def surfaces(cast, client_for, change_id: str) -> dict[str, object]:
    """The change's application state and the project's scope RAG, as each surface says."""
    lead = client_for(cast.lead)
    api = lead.get(f"{CHANGES}/{change_id}").json()
    export = lead.get("/api/v1/projects/ALPHA/changes/export?format=csv").content.decode()
    exported = {row["id"]: row for row in csv.DictReader(io.StringIO(export.lstrip("\ufeff")))}
    page = lead.get("/projects/ALPHA/registers/changes/").content.decode()
    status = lead.get("/api/v1/projects/ALPHA/status").json()
    set_governance_group(PMO_GROUP)
    pmo = client_for(cast.pmo)
    agent = pmo.post(
        "/api/v1/agent/actions/list_register",
        data=json.dumps({"arguments": {"projectKey": "ALPHA", "register": "changes"}}),
        content_type="application/json",
    ).json()
    agent_item = next(i for i in agent["result"]["items"] if i["id"] == change_id)
    portfolio = {r["projectKey"]: r for r in pmo.get("/api/v1/portfolio").json()}
    return {
        "api": (api["applicationState"], api["dimensions"]),
        "export": (exported[change_id]["applicationState"], exported[change_id]["dimensions"]),
        "agent": (agent_item["applicationState"], agent_item["dimensions"]),
        "page awaiting": "Awaiting application" in page,
        "status scope": status["derived"]["scopeRag"],
        "portfolio scope": portfolio["ALPHA"]["derived"]["scopeRag"],
    }


def test_unchosen_dimensions_follow_the_impacts_on_every_surface(cast, client_for):
    lead, sponsor = client_for(cast.lead), client_for(cast.sponsor)
    created = lead.post(
        CHANGES,
        data={"summary": "Extra module", "impactBudget": 5000},
        content_type="application/json",
    ).json()
    assert created["dimensions"] == ["Budget"] and created["dimensionsChosen"] is False
    updated = lead.patch(
        f"{CHANGES}/{created['id']}",
        data={"impactScope": "Adds a reporting module"},
        content_type="application/json",
    ).json()
    # Before: the first save's [Budget] was kept, the approval read as Applied, scope Green.
    assert updated["dimensions"] == ["Scope", "Budget"]
    response = sponsor.post(
        f"{CHANGES}/{created['id']}/adjudicate",
        data={"outcome": "Approved"},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    seen = surfaces(cast, client_for, created["id"])
    assert seen["api"] == ("AwaitingApplication", ["Scope", "Budget"])
    assert seen["agent"] == seen["api"]
    assert seen["export"][0] == "AwaitingApplication"
    assert "Scope" in seen["export"][1] and "Budget" in seen["export"][1]
    assert seen["page awaiting"] is True
    assert seen["status scope"] == seen["portfolio scope"] == "Amber"


def test_chosen_dimensions_are_kept_and_an_empty_list_hands_them_back(cast, client_for):
    lead = client_for(cast.lead)
    created = lead.post(
        CHANGES,
        data={"summary": "Cheaper host", "impactBudget": -800, "dimensions": ["Budget"]},
        content_type="application/json",
    ).json()
    assert created["dimensionsChosen"] is True
    kept = lead.patch(
        f"{CHANGES}/{created['id']}",
        data={"impactScope": "Moves the archive"},
        content_type="application/json",
    ).json()
    assert kept["dimensions"] == ["Budget"] and kept["dimensionsChosen"] is True
    handed_back = lead.patch(
        f"{CHANGES}/{created['id']}", data={"dimensions": []}, content_type="application/json"
    ).json()
    assert handed_back["dimensions"] == ["Scope", "Budget"]
    assert handed_back["dimensionsChosen"] is False


def test_the_form_says_inferred_and_saving_it_unticked_keeps_them_inferred(cast, client_for):
    lead = client_for(cast.lead)
    created = lead.post(
        CHANGES,
        data={"summary": "Longer test", "impactScheduleDays": 5},
        content_type="application/json",
    ).json()
    form = lead.get(f"/projects/ALPHA/registers/changes/{created['id']}/edit/").content.decode()
    assert "Now Schedule, inferred from the impacts." in form
    assert 'value="Schedule" checked' not in form
    page = lead.get("/projects/ALPHA/registers/changes/").content.decode()
    assert "inferred from the impacts" in page
    response = lead.post(
        f"/projects/ALPHA/registers/changes/{created['id']}/",
        {"summary": "Longer test", "impactScheduleDays": "5", "impactBudget": "300", "revision": 1},
    )
    assert response.status_code in (200, 302), response.content
    change = ChangeRequest.objects.get(pk=created["id"])
    assert change.dimensions == ["Budget", "Schedule"] and change.dimensions_chosen is False


@pytest.mark.parametrize(("row_dimensions", "chosen"), [("Quality", True), ("", False)])
def test_an_import_row_with_dimensions_counts_as_chosen(cast, bearer, row_dimensions, chosen):
    body = f"summary,dimensions,impactBudget\nNew supplier,{row_dimensions},100\n".encode()
    response = Client().post(
        f"{CHANGES}/import",
        {"file": SimpleUploadedFile("changes.csv", body, content_type="text/csv")},
        **bearer(cast.lead),
    )
    assert response.status_code == 201, response.content
    change = ChangeRequest.objects.get(summary="New supplier")
    assert change.dimensions_chosen is chosen
    assert change.dimensions == (["Quality"] if chosen else ["Budget"])
