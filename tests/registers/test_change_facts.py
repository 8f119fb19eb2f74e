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
from django.utils import timezone

from charter.models import BusinessCase
from charter.services import sync_mirror
from charter.services.lifecycle import plan_baseline
from governance.models import AuditEntry
from registers.models import ChangeRequest, WorkPackage
from tests.charter.conftest import complete_inputs
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import WorkPackageFactory

CHANGES = "/api/v1/projects/ALPHA/changes"


def surfaces(cast, client_for, change_id: str) -> dict[str, object]:
    """The change's application state and the project's scope RAG, as each surface says."""
    lead = client_for(cast.lead)
    api = lead.get(f"{CHANGES}/{change_id}").json()
    export = (
        lead.get("/api/v1/projects/ALPHA/changes/export?format=csv&shape=api").getvalue().decode()
    )
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
    portfolio = {r["projectKey"]: r for r in pmo.get("/api/v1/portfolio").json()["items"]}
    set_governance_group("")
    return {
        "api": (api["applicationState"], api["dimensions"]),
        "export": (exported[change_id]["applicationState"], exported[change_id]["dimensions"]),
        "agent": (agent_item["applicationState"], agent_item["dimensions"]),
        "page": _row_application(page, change_id),
        "status scope": status["derived"]["scopeRag"],
        "portfolio scope": portfolio["ALPHA"]["derived"]["scopeRag"],
    }


def _row_application(page: str, change_id: str) -> str:
    """The application label the register page shows in the change's row."""
    row = page[page.index(f'id="change-{change_id}"') :]
    row = row[: row.index("</tr>")]
    marker = '<span class="sub application application-'
    if marker not in row:
        return ""
    label = row[row.index(marker) + len(marker) :]
    return label[label.index(">") + 1 : label.index("<")]


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
    assert seen["page"] == "Awaiting application"
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


# --- applying an approved change to its work package's baseline ------------------------------


@pytest.fixture
def baselined(cast):
    """ALPHA with an approved business case whose plan baseline holds one work package
    (budget 1000, planned 1 Jan to 30 Jun 2026)."""
    package = WorkPackageFactory(project=cast.project, name="Portal", budget_baseline=1000)
    case, _ = BusinessCase.objects.update_or_create(
        project=cast.project, defaults={**complete_inputs(cast), "approval_status": "Approved"}
    )
    case.plan_baseline = plan_baseline(case, [package], timezone.now())
    case.save()
    sync_mirror(cast.project, case)
    cast.project.refresh_from_db()
    return package


def approved_scope_change(cast, client_for, package, **impacts) -> dict:
    body = {
        "summary": "Add an export",
        "impactScope": "Adds a CSV export",
        "targetWorkPackageId": str(package.pk),
        **impacts,
    }
    created = client_for(cast.lead).post(CHANGES, data=body, content_type="application/json")
    assert created.status_code == 201, created.content
    change_id = created.json()["id"]
    decided = client_for(cast.sponsor).post(
        f"{CHANGES}/{change_id}/adjudicate",
        data={"outcome": "Approved"},
        content_type="application/json",
    )
    assert decided.status_code == 200, decided.content
    return decided.json()


def apply(client, change_id: str):
    return client.post(
        f"{CHANGES}/{change_id}/apply-to-baseline", data={}, content_type="application/json"
    )


def test_applying_a_change_to_its_package_baseline_clears_it_everywhere(
    cast, client_for, baselined
):
    change = approved_scope_change(
        cast, client_for, baselined, impactBudget=250, impactScheduleDays=14
    )
    before = surfaces(cast, client_for, change["id"])
    assert before["api"][0] == before["agent"][0] == before["export"][0] == "AwaitingApplication"
    assert before["page"] == "Awaiting application"
    assert before["status scope"] == before["portfolio scope"] == "Amber"
    lead_page = client_for(cast.lead).get("/projects/ALPHA/registers/changes/").content.decode()
    editor_page = client_for(cast.editor).get("/projects/ALPHA/registers/changes/").content
    assert "Apply to baseline" in lead_page and b"Apply to baseline" not in editor_page

    assert apply(client_for(cast.editor), change["id"]).status_code == 403
    response = apply(client_for(cast.lead), change["id"])
    assert response.status_code == 200, response.content
    record = response.json()["applicationRecord"]
    assert record["kind"] == "baseline" and record["ref"] == str(baselined.pk)
    assert record["by"] == cast.lead.account_id and record["at"]

    after = surfaces(cast, client_for, change["id"])
    assert after["api"][0] == after["agent"][0] == after["export"][0] == "Applied"
    assert after["page"] == "Applied"
    assert after["status scope"] == after["portfolio scope"] == "Green"
    lead = client_for(cast.lead)
    entry = lead.get("/api/v1/projects/ALPHA/charter").json()["planBaseline"]["workPackages"][
        str(baselined.pk)
    ]
    assert entry["budget"] == 1250 and entry["plannedEndDate"] == "2026-07-14"
    assert entry["plannedStartDate"] == "2026-01-01"
    package = lead.get(f"/api/v1/projects/ALPHA/work-packages/{baselined.pk}").json()
    assert package["budgetBaseline"] == 1250
    kinds = set(AuditEntry.objects.values_list("kind", flat=True))
    assert {"change.applied", "work_package.baselined", "charter.baseline_changed"} <= kinds

    again = apply(lead, change["id"])
    assert again.status_code == 409 and "already applied" in again.json()["error"]["message"]


def test_the_page_button_applies_the_change(cast, client_for, baselined):
    change = approved_scope_change(cast, client_for, baselined)
    response = client_for(cast.lead).post(
        f"/projects/ALPHA/charter/changes/{change['id']}/apply-to-baseline/",
        {"revision": change["revision"]},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Apply to baseline" not in response.content.decode()
    assert ChangeRequest.objects.get(pk=change["id"]).application_record["kind"] == "baseline"


def test_applying_is_refused_without_a_baseline_to_apply_to(cast, client_for, baselined):
    change = approved_scope_change(cast, client_for, baselined)
    lead = client_for(cast.lead)
    newcomer = WorkPackageFactory(project=cast.project, name="Added later")
    other = approved_scope_change(cast, client_for, newcomer)
    refused = apply(lead, other["id"])
    assert refused.status_code == 409
    assert "Added later" in refused.json()["error"]["message"]
    BusinessCase.objects.filter(project=cast.project).update(plan_baseline=None)
    refused = apply(lead, change["id"])
    assert refused.status_code == 409
    assert "no approved plan baseline" in refused.json()["error"]["message"]
    assert ChangeRequest.objects.get(pk=change["id"]).application_record is None
    proposed = lead.post(
        CHANGES,
        data={"summary": "Not yet", "targetWorkPackageId": str(baselined.pk)},
        content_type="application/json",
    ).json()
    refused = apply(lead, proposed["id"])
    assert refused.status_code == 409 and "still proposed" in refused.json()["error"]["message"]


def test_a_change_is_applied_to_a_baseline_only_while_the_case_is_approved(
    cast, client_for, baselined
):
    """A re-opened case (Draft at the next version) has no baseline in force to apply to, and
    the change enabling the amendment is applied by the amended case's approval, never twice."""
    change = approved_scope_change(cast, client_for, baselined)
    lead = client_for(cast.lead)
    BusinessCase.objects.filter(project=cast.project).update(
        approval_status="Draft", version=2, amendment_enabled_by_change_id=change["id"]
    )
    sync_mirror(cast.project, BusinessCase.objects.get(project=cast.project))
    refused = apply(lead, change["id"])
    assert refused.status_code == 409
    assert (
        "while the business case is Approved; it is Draft now" in refused.json()["error"]["message"]
    )
    BusinessCase.objects.filter(project=cast.project).update(approval_status="Approved")
    refused = apply(lead, change["id"])
    assert refused.status_code == 409
    assert "enables the amendment" in refused.json()["error"]["message"]
    assert ChangeRequest.objects.get(pk=change["id"]).application_record is None
    assert WorkPackage.objects.get(pk=baselined.pk).budget_baseline == 1000


def test_a_far_baseline_end_stored_before_the_date_rule_is_moved_without_an_error(
    cast, client_for, baselined
):
    case = BusinessCase.objects.get(project=cast.project)
    case.plan_baseline["workPackages"][str(baselined.pk)]["plannedEndDate"] = "9999-12-31"
    case.save()
    change = approved_scope_change(cast, client_for, baselined, impactScheduleDays=10)
    applied = apply(client_for(cast.lead), change["id"])
    assert applied.status_code == 200, applied.content
    case.refresh_from_db()
    assert case.plan_baseline["workPackages"][str(baselined.pk)]["plannedEndDate"] == "2199-12-31"


def test_an_applied_change_moves_the_plan_with_its_baseline(cast, client_for, baselined):
    """The package's plannedEndDate held the baseline end: it moves with it, so the package
    does not read re-planned after an approved change (one audit entry for the package)."""
    change = approved_scope_change(cast, client_for, baselined, impactScheduleDays=14)
    assert apply(client_for(cast.lead), change["id"]).status_code == 200
    lead = client_for(cast.lead)
    package = lead.get(f"/api/v1/projects/ALPHA/work-packages/{baselined.pk}").json()
    assert package["plannedEndDate"] == package["baselineEndDate"] == "2026-07-14"
    assert package["plannedStartDate"] == package["baselineStartDate"] == "2026-01-01"
    page = lead.get("/projects/ALPHA/registers/work-packages/").content.decode()
    assert "re-planned" not in page
    entries = AuditEntry.objects.filter(kind="work_package.baselined", target_id=baselined.pk)
    assert [e.changes for e in entries] == [
        {"plannedEndDate": {"before": "2026-06-30", "after": "2026-07-14"}}
    ]


def test_a_plan_already_re_planned_stays_as_the_lead_set_it(cast, client_for, baselined):
    WorkPackage.objects.filter(pk=baselined.pk).update(planned_end_date="2026-08-31")
    change = approved_scope_change(
        cast, client_for, baselined, impactScheduleDays=14, impactBudget=100
    )
    assert apply(client_for(cast.lead), change["id"]).status_code == 200
    package = (
        client_for(cast.lead).get(f"/api/v1/projects/ALPHA/work-packages/{baselined.pk}").json()
    )
    assert package["plannedEndDate"] == "2026-08-31"
    assert package["baselineEndDate"] == "2026-07-14"
    assert package["budgetBaseline"] == 1100
    page = client_for(cast.lead).get("/projects/ALPHA/registers/work-packages/")
    assert "re-planned" in page.content.decode()
