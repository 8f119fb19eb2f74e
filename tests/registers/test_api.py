"""The registers' JSON API exactly as docs/api.md spells it: paths, fields, derived fields, ETag
and If-Match, 201/204, and the error codes."""

import json

import pytest
from django.test import Client

from governance.models import AuditEntry
from governance.tracker.local import scripting
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import (
    DecisionFactory,
    SteeringMinutesFactory,
    WorkPackageFactory,
)

BASE = "/api/v1/projects/ALPHA"


@pytest.fixture
def api(cast, bearer):
    """A JSON client per role: api("lead").post(path, body, **headers)."""

    class JsonClient:
        def __init__(self, user):
            self.client = Client()
            self.auth = bearer(user)

        def _send(self, method, path, body=None, **headers):
            data = body if isinstance(body, str) else json.dumps(body or {})
            return self.client.generic(
                method,
                BASE + path,
                data=data,
                content_type="application/json",
                **self.auth,
                **headers,
            )

        def get(self, path, **headers):
            return self.client.get(BASE + path, **self.auth, **headers)

        def post(self, path, body=None, **headers):
            return self._send("POST", path, body, **headers)

        def patch(self, path, body=None, **headers):
            return self._send("PATCH", path, body, **headers)

        def delete(self, path, **headers):
            return self._send("DELETE", path, None, **headers)

    return lambda role: JsonClient(getattr(cast, role))


def error(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert body["code"] == code and body["message"]
    return body


WORK_PACKAGE_FIELDS = {
    "id", "projectKey", "name", "type", "ownerAccountId", "plannedStartDate", "plannedEndDate",
    "actualStartDate", "actualEndDate", "actualEnd", "forecastStartDate", "forecastEndDate",
    "scheduleVarianceDays", "scheduleVarianceBasis", "baselineStartDate", "baselineEndDate",
    "status", "rag", "progress", "budget", "budgetPhasing",
    "budgetBaseline", "budgetForecast", "budgetActual", "commentary", "linkedIssueKeys",
    "brokenIssueKeys",
    "sortOrder", "budgetBaselineLockedAt", "plannedDatesBaselineLockedAt", "createdAt",
    "updatedAt", "updatedByAccountId", "revision",
}  # fmt: skip


def test_work_package_crud_with_etags_and_status_codes(api, cast):
    lead = api("lead")
    created = lead.post(
        "/work-packages",
        {
            "name": "Build",
            "plannedEndDate": "2026-06-30",
            "forecastEndDate": "2026-07-10",
            "budget": 1000,
            "budgetBaseline": 1,
            "scheduleVarianceDays": 99,
        },
    )
    assert created.status_code == 201 and created["ETag"] == '"1"'
    body = created.json()
    assert set(body) == WORK_PACKAGE_FIELDS
    assert body["scheduleVarianceDays"] == 10 and body["budgetBaseline"] is None
    assert body["projectKey"] == "ALPHA" and body["budget"] == 1000
    path = f"/work-packages/{body['id']}"
    got = lead.get(path)
    assert got.status_code == 200 and got["ETag"] == '"1"' and got.json() == body
    patched = lead.patch(path, {"status": "Blocked", "progress": 40}, HTTP_IF_MATCH='"1"')
    assert patched.status_code == 200 and patched["ETag"] == '"2"'
    assert patched.json()["status"] == "Blocked"
    error(lead.patch(path, {"progress": 50}, HTTP_IF_MATCH='"1"'), 412, "stale")
    error(lead.delete(path, HTTP_IF_MATCH='"1"'), 412, "stale")
    deleted = lead.delete(path, HTTP_IF_MATCH='"2"')
    assert deleted.status_code == 204 and deleted.content == b""
    error(lead.get(path), 404, "not_found")


def test_validation_errors_name_every_field_and_array_entry(api, cast):
    body = error(
        api("lead").post(
            "/work-packages",
            {
                "name": "",
                "status": "Complete",
                "progress": 90,
                "budgetPhasing": [
                    {"period": "2026-01", "amount": 1},
                    {"period": "Jan", "amount": 1},
                ],
                "nonsense": 1,
            },
        ),
        422,
        "validation",
    )
    assert set(body["fields"]) == {"name", "progress", "budgetPhasing[1].period", "nonsense"}
    assert not WorkPackage.objects.exists()


def test_body_must_be_a_json_object(api, cast):
    error(api("lead").post("/work-packages", "[1, 2]"), 400, "bad_request")
    error(api("lead").post("/risks", "{not json"), 400, "bad_request")
    # An unreadable If-Match is answered where the revision is checked: after the row is found.
    error(api("lead").patch("/work-packages/x", {}, HTTP_IF_MATCH="yesterday"), 404, "not_found")
    wp = WorkPackageFactory(project=cast.project)
    error(
        api("lead").patch(f"/work-packages/{wp.pk}", {}, HTTP_IF_MATCH="yesterday"),
        400,
        "bad_request",
    )


def test_viewer_reads_but_may_not_write_and_outsider_sees_nothing(api, cast):
    wp = WorkPackageFactory(project=cast.project)
    viewer = api("viewer")
    assert viewer.get("/work-packages").json()["items"][0]["id"] == str(wp.pk)
    error(viewer.post("/work-packages", {"name": "x"}), 403, "forbidden")
    error(viewer.patch(f"/work-packages/{wp.pk}", {"name": "x"}), 403, "forbidden")
    error(viewer.delete(f"/work-packages/{wp.pk}"), 403, "forbidden")
    error(api("outsider").get("/work-packages"), 404, "not_found")
    error(Client().get(BASE + "/work-packages"), 401, "unauthenticated")


def test_frozen_registers_answer_409_frozen(api, cast):
    wp = WorkPackageFactory(project=cast.project)
    decision = DecisionFactory(project=cast.project)
    cast.project.approval_status = "Archived"
    cast.project.save()
    lead = api("lead")
    error(lead.post("/work-packages", {"name": "x"}), 409, "frozen")
    error(lead.patch(f"/work-packages/{wp.pk}", {"name": "x"}), 409, "frozen")
    error(lead.post("/risks", {"title": "x"}), 409, "frozen")
    error(lead.post("/changes", {"summary": "x"}), 409, "frozen")
    error(lead.patch(f"/decisions/{decision.pk}", {"rationale": "x"}), 409, "frozen")
    assert lead.post(f"/decisions/{decision.pk}/notes", {"text": "still"}).status_code == 201


def test_links_reorder_and_list_order(api, cast):
    scripting.ensure_issue("ALPHA-7", summary="Epic")
    lead = api("lead")
    a = lead.post("/work-packages", {"name": "A"}).json()
    b = lead.post("/work-packages", {"name": "B"}).json()
    linked = lead.post(f"/work-packages/{a['id']}/links", {"issueKey": "alpha-7"})
    assert linked.status_code == 200 and linked.json()["linkedIssueKeys"] == ["ALPHA-7"]
    assert linked["ETag"] == '"2"'
    body = error(
        lead.post(f"/work-packages/{b['id']}/links", {"issueKey": "ALPHA-7"}), 422, "validation"
    )
    assert set(body["fields"]) == {"issueKey"}
    unlinked = lead.delete(f"/work-packages/{a['id']}/links/ALPHA-7")
    assert unlinked.status_code == 204
    error(lead.delete(f"/work-packages/{a['id']}/links/ALPHA-7"), 404, "not_found")
    reordered = lead.post("/work-packages/reorder", {"ids": [b["id"], a["id"]]})
    assert [wp["name"] for wp in reordered.json()] == ["B", "A"]
    assert [wp["name"] for wp in lead.get("/work-packages").json()["items"]] == ["B", "A"]
    assert [wp["sortOrder"] for wp in lead.get("/work-packages").json()["items"]] == [1, 2]
    error(lead.post("/work-packages/reorder", {"ids": [a["id"]]}), 422, "validation")


def test_risk_api_with_score_and_record_decision(api, cast):
    lead = api("lead")
    created = lead.post(
        "/risks",
        {
            "title": "Vendor",
            "impact": 4,
            "likelihood": 4,
            "residualImpact": 2,
            "residualLikelihood": 2,
            "score": 1,
        },
    )
    assert created.status_code == 201
    risk = created.json()
    assert risk["score"] == 4 and risk["status"] == "Open" and risk["treatingDecisionIds"] == []
    path = f"/risks/{risk['id']}"
    error(lead.post(f"{path}/record-decision"), 409, "conflict")
    lead.patch(path, {"materialised": True, "status": "anything"})
    recorded = lead.post(f"{path}/record-decision", {"rationale": "Switch"})
    assert recorded.status_code == 201
    decision = recorded.json()
    assert decision["riskId"] == decision["treatedRiskId"] == risk["id"]
    assert decision["decision"] == "Vendor" and decision["rationale"] == "Switch"
    assert lead.get(path).json()["treatingDecisionIds"] == [decision["id"]]
    assert lead.delete(path).status_code == 204


def test_decision_api_pending_made_and_notes(api, cast):
    minutes = SteeringMinutesFactory(project=cast.project, title="Steerco 1", url="https://w/1")
    lead = api("lead")
    created = lead.post("/decisions", {"decision": "Go", "minutesRef": {"id": str(minutes.pk)}})
    assert created.status_code == 201
    decision = created.json()
    assert decision["state"] == "Pending" and decision["status"] == "Proposed"
    assert decision["madeByAccountId"] is None
    assert decision["minutesRef"] == {
        "id": str(minutes.pk),
        "title": "Steerco 1",
        "url": "https://w/1",
    }
    path = f"/decisions/{decision['id']}"
    made = lead.patch(path, {"madeOn": "2026-01-02", "state": "Pending", "notes": [{"text": "x"}]})
    assert made.status_code == 200 and made.json()["state"] == "Made" and made.json()["notes"] == []
    assert AuditEntry.objects.filter(kind="decision.made").exists()
    error(lead.patch(path, {"rationale": "later"}), 409, "conflict")
    noted = lead.post(f"{path}/notes", {"text": "Correction", "authorAccountId": "forged"})
    assert noted.status_code == 201
    note = noted.json()["notes"][0]
    assert note["authorAccountId"] == cast.lead.account_id and note["text"] == "Correction"
    error(lead.post(f"{path}/notes", {}), 422, "validation")
    older = DecisionFactory(project=cast.project, decision="Older")
    Decision.objects.filter(pk=older.pk).update(created_at="2020-01-01T00:00:00Z")
    assert [d["decision"] for d in lead.get("/decisions").json()["items"]] == ["Go", "Older"]


def test_decisions_have_no_delete_and_no_adjudication(api, cast):
    decision = DecisionFactory(project=cast.project)
    response = api("lead").delete(f"/decisions/{decision.pk}")
    assert response.status_code == 405
    response = api("lead").post(f"/decisions/{decision.pk}/adjudicate", {"outcome": "Approved"})
    assert response.status_code in (404, 405)


def test_change_api_adjudication_and_application_state(api, cast):
    lead = api("lead")
    created = lead.post(
        "/changes",
        {"summary": "More budget", "impactBudget": 500, "applicationRecord": {"kind": "charter"}},
    )
    assert created.status_code == 201
    change = created.json()
    assert change["dimensions"] == ["Budget"] and change["applicationRecord"] is None
    assert change["applicationState"] == "Proposed"
    path = f"/changes/{change['id']}"
    error(lead.post(f"{path}/adjudicate", {"outcome": "Approved"}), 403, "forbidden")
    body = error(
        api("sponsor").post(f"{path}/adjudicate", {"outcome": "Rejected"}), 422, "validation"
    )
    assert set(body["fields"]) == {"decisionComment"}
    approved = api("sponsor").post(
        f"{path}/adjudicate", {"outcome": "Approved"}, HTTP_IF_MATCH='"1"'
    )
    assert approved.status_code == 200 and approved.json()["applicationState"] == "Applied"
    error(lead.patch(path, {"summary": "x"}), 409, "conflict")
    error(lead.delete(path), 409, "conflict")
    scope = lead.post("/changes", {"summary": "Add SSO", "impactScope": "SSO"}).json()
    withdrawn = lead.post(f"/changes/{scope['id']}/adjudicate", {"outcome": "Withdrawn"})
    assert withdrawn.json()["status"] == "Withdrawn"


def test_exports_csv_and_xlsx_with_blank_unnamed_maker(api, cast):
    from io import BytesIO

    from openpyxl import load_workbook

    DecisionFactory(project=cast.project, decision="=HYPERLINK(evil)", made_on="2026-01-01")
    DecisionFactory(
        project=cast.project, decision="Named", made_by_account_id=cast.sponsor.account_id
    )
    csv_response = api("viewer").get("/decisions/export?format=csv&shape=api")
    assert csv_response.status_code == 200
    assert csv_response["Content-Type"].startswith("text/csv")
    assert "attachment" in csv_response["Content-Disposition"]
    import csv

    rows = list(csv.DictReader(csv_response.getvalue().decode("utf-8-sig").splitlines()))
    by_text = {r["decision"].lstrip("'"): r for r in rows}
    assert by_text["=HYPERLINK(evil)"]["decision"] == "'=HYPERLINK(evil)"
    unnamed = by_text["=HYPERLINK(evil)"]
    assert unnamed["madeByAccountId"] == "" and unnamed["madeByName"] == ""
    assert unnamed["state"] == "Made" and unnamed["madeOn"] == "2026-01-01"
    assert by_text["Named"]["madeByName"] == "Sam Sponsor"
    xlsx = api("viewer").get("/decisions/export?format=xlsx&shape=api")
    sheet = load_workbook(BytesIO(xlsx.getvalue()), read_only=True).worksheets[0]
    table = [list(r) for r in sheet.iter_rows(values_only=True)]
    header = table[0]
    records = {r[header.index("decision")]: dict(zip(header, r, strict=False)) for r in table[1:]}
    assert records["=HYPERLINK(evil)"]["madeByAccountId"] is None
    assert records["=HYPERLINK(evil)"]["madeByName"] is None
    error(api("viewer").get("/decisions/export?format=pdf"), 422, "validation")
    error(api("viewer").get("/ledgers/export"), 404, "not_found")


def _upload(client, path, name, content):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return client.client.post(
        BASE + path, {"file": SimpleUploadedFile(name, content)}, **client.auth
    )


def test_import_all_or_nothing(api, cast):
    lead = api("lead")
    good = b"title,impact,likelihood,direction\nVendor,4,3,Risk\nUpside,2,2,Opportunity\n"
    response = _upload(lead, "/risks/import", "risks.csv", good)
    assert response.status_code == 201 and response.json() == {"created": 2, "warnings": []}
    assert set(Risk.objects.values_list("imported", flat=True)) == {True}
    bad = b"title,impact\nFine,3\n,9\nAlso fine,2\n"
    response = _upload(lead, "/risks/import", "risks.csv", bad)
    body = error(response, 422, "validation")
    assert {(r["row"], r["field"]) for r in body["rows"]} == {(3, "title"), (3, "impact")}
    assert Risk.objects.count() == 2
    body = error(
        _upload(lead, "/risks/import", "x.csv", b"title,colour\nA,red\n"), 422, "validation"
    )
    assert body["rows"] == [{"row": 1, "field": "colour", "message": "Unknown column (column 2)."}]
    error(_upload(api("viewer"), "/risks/import", "risks.csv", good), 403, "forbidden")


def test_export_imports_back_into_another_project(api, cast):
    scripting.ensure_issue("ALPHA-3", summary="Epic")
    lead = api("lead")
    lead.post(
        "/work-packages",
        {
            "name": "Design",
            "budgetPhasing": [{"period": "2026-01", "amount": 5}],
            "linkedIssueKeys": ["ALPHA-3"],
            "status": "In Progress",
            "progress": 30,
        },
    )
    lead.post("/changes", {"summary": "Scope", "dimensions": ["Scope", "Quality"]})
    for register in ("work-packages", "changes", "risks", "decisions"):
        exported = lead.get(f"/{register}/export?format=xlsx&shape=api").getvalue()
        if register == "work-packages":
            WorkPackage.objects.all().delete()
        if register == "changes":
            ChangeRequest.objects.all().delete()
        response = _upload(lead, f"/{register}/import", "back.xlsx", exported)
        if register in ("risks", "decisions"):
            error(response, 422, "validation")  # an empty register has no rows to import
        else:
            assert response.status_code == 201, response.content
    wp = WorkPackage.objects.get()
    assert wp.budget_phasing == [{"period": "2026-01", "amount": 5}]
    assert wp.linked_issue_keys == ["ALPHA-3"] and wp.progress == 30
    change = ChangeRequest.objects.get()
    assert change.dimensions == ["Scope", "Quality"] and change.imported is True


def test_import_into_frozen_registers_is_refused(api, cast):
    cast.project.approval_status = "Closed"
    cast.project.save()
    response = _upload(api("lead"), "/risks/import", "r.csv", b"title\nLate\n")
    error(response, 409, "frozen")
    assert not Risk.objects.exists()


def test_imported_is_present_only_on_bulk_imported_rows(api, cast):
    """The spec: `imported` is present (true) only on bulk-imported rows. Typed-in risks,
    decisions and changes carry no `imported` key, in the API and in the exports alike."""
    import csv

    lead = api("lead")
    typed = {
        "risks": lead.post("/risks", {"title": "Typed"}).json(),
        "decisions": lead.post("/decisions", {"decision": "Typed"}).json(),
        "changes": lead.post("/changes", {"summary": "Typed"}).json(),
    }
    files = {
        "risks": b"title\nFrom a file\n",
        "decisions": b"decision\nFrom a file\n",
        "changes": b"summary\nFrom a file\n",
    }
    title = {"risks": "title", "decisions": "decision", "changes": "summary"}
    for register, record in typed.items():
        assert "imported" not in record
        response = _upload(lead, f"/{register}/import", "rows.csv", files[register])
        assert response.status_code == 201, response.content
        listed = {r[title[register]]: r for r in lead.get(f"/{register}").json()["items"]}
        assert "imported" not in listed["Typed"]
        assert listed["From a file"]["imported"] is True
        detail = lead.get(f"/{register}/{listed['From a file']['id']}").json()
        assert detail["imported"] is True
        assert "imported" not in lead.get(f"/{register}/{record['id']}").json()
        export = lead.get(f"/{register}/export?format=csv&shape=api").getvalue().decode("utf-8-sig")
        rows = {r[title[register]]: r for r in csv.DictReader(export.splitlines())}
        assert rows["Typed"]["imported"] == "" and rows["From a file"]["imported"] == "true"


def test_a_broken_link_is_in_the_work_packages_api_representation(cast, client_for):
    """The API shows what the detail page shows: the links Jira broke, read-only."""
    from tests.factories import WorkPackageFactory

    wp = WorkPackageFactory(
        project=cast.project,
        linked_issue_keys=["ALPHA-1"],
        broken_issue_keys={"ALPHA-1": "deleted"},
    )
    lead = client_for(cast.lead)
    body = lead.get(f"/api/v1/projects/ALPHA/work-packages/{wp.pk}").json()
    assert body["brokenIssueKeys"] == {"ALPHA-1": "deleted"}
    sent_back = lead.patch(
        f"/api/v1/projects/ALPHA/work-packages/{wp.pk}",
        data={"brokenIssueKeys": {}, "commentary": "Checked"},
        content_type="application/json",
    )
    assert sent_back.status_code == 200, sent_back.content
    assert sent_back.json()["brokenIssueKeys"] == {"ALPHA-1": "deleted"}
