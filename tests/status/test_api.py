"""GET/PATCH /projects/{key}/status (derived, effective, stale, ETag/If-Match) and the status
report endpoints."""

import json
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from governance import signals
from status.models import ProjectStatus, StatusReport
from tests.factories import RiskFactory, WorkPackageFactory

URL = "/api/v1/projects/ALPHA/status"


def patch(client, url, body, **headers):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.patch(url, data=data, content_type="application/json", **headers)


def post(client, url, body=None, **headers):
    data = "" if body is None else json.dumps(body)
    return client.post(url, data=data, content_type="application/json", **headers)


def error_code(response):
    return response.json()["error"]["code"]


@pytest.fixture
def lead_api(cast, bearer):
    return Client(**bearer(cast.lead))


def test_get_carries_derived_effective_stale_and_an_etag(cast, lead_api):
    WorkPackageFactory(project=cast.project, budget=Decimal(100), budget_forecast=Decimal(120))
    RiskFactory(project=cast.project, impact=2, likelihood=4)
    response = lead_api.get(URL)
    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert set(body["derived"]) == {"costRag", "scheduleRag", "scopeRag", "riskRag"}
    assert body["derived"]["costRag"] == "Red"
    assert body["derived"]["riskRag"] == "Amber"
    assert body["effective"] == body["derived"]
    assert body["stale"] is True  # never updated
    summary = body["drivers"]["costRag"]["summary"]
    assert summary.startswith("The forecast (EAC) EUR\u00a0120 is 20% over")
    assert body["projectKey"] == "ALPHA"


def test_patch_updates_with_if_match_and_refuses_a_stale_one(cast, lead_api):
    response = patch(
        lead_api, URL, {"costRagOverride": "Green", "overallRag": "Amber"}, HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["effective"]["costRag"] == "Green"
    assert body["stale"] is False
    assert body["lastUpdatedByAccountId"] == cast.lead.account_id
    stale = patch(lead_api, URL, {"overallRag": "Red"}, HTTP_IF_MATCH='"1"')
    assert stale.status_code == 412
    assert error_code(stale) == "stale"
    assert ProjectStatus.objects.get().overall_rag == "Amber"


def test_patch_ignores_derived_fields_and_refuses_unknown_ones(cast, lead_api):
    current = lead_api.get(URL).json()
    current["overallRag"] = "Green"
    current["effective"] = {"costRag": "Blue"}
    assert patch(lead_api, URL, current).status_code == 200
    refused = patch(lead_api, URL, {"overallRag": "Red", "colour": "blue"})
    assert refused.status_code == 422
    assert refused.json()["error"]["fields"] == {"colour": ["Unknown field."]}
    assert ProjectStatus.objects.get().overall_rag == "Green"


def test_patch_clamps_reasons_and_nulls_junk_overrides(lead_api):
    body = patch(lead_api, URL, {"overallReason": "r" * 300, "scheduleRagOverride": "Mauve"}).json()
    assert body["overallReason"] == "r" * 120
    assert body["scheduleRagOverride"] is None


def test_patch_body_must_be_an_object(lead_api):
    assert error_code(patch(lead_api, URL, "[1, 2]")) == "bad_request"
    assert error_code(patch(lead_api, URL, "{nope")) == "bad_request"


def test_viewers_read_but_may_not_patch(cast, bearer):
    viewer = Client(**bearer(cast.viewer))
    assert viewer.get(URL).status_code == 200
    response = patch(viewer, URL, {"overallRag": "Red"})
    assert response.status_code == 403
    assert not ProjectStatus.objects.exists()
    outsider = Client(**bearer(cast.outsider))
    assert outsider.get(URL).status_code == 404


def test_initiation_acts(cast, lead_api):
    response = post(lead_api, URL + "/initiation/dismiss", {"itemId": "sponsorNamed"})
    assert response.status_code == 200
    assert "sponsorNamed" in response.json()["initiationDismissals"]
    item = next(i for i in response.json()["initiationChecklist"] if i["id"] == "sponsorNamed")
    assert item["dismissedAt"] == response.json()["initiationDismissals"]["sponsorNamed"]
    assert post(lead_api, URL + "/initiation/dismiss", {"itemId": "x"}).status_code == 422
    assert post(lead_api, URL + "/initiation/dismiss", {"item": "x"}).status_code == 422
    restored = post(lead_api, URL + "/initiation/restore", {"itemId": "sponsorNamed"})
    assert restored.json()["initiationDismissals"] == {}
    early = post(lead_api, URL + "/initiation/acknowledge")
    assert early.status_code == 409
    assert early.json()["error"]["message"].startswith("Initiation starts when the business case")
    signals.charter_approved.send(sender=None, project=cast.project, at=timezone.now())
    done = post(lead_api, URL + "/initiation/acknowledge")
    assert done.json()["initiationCompletedAt"]
    assert done.json()["initiationCompletedAt"] >= done.json()["initiationStartedAt"]
    again = post(lead_api, URL + "/initiation/acknowledge")
    assert again.status_code == 409
    assert error_code(again) == "conflict"


def test_report_lifecycle_over_the_api(cast, lead_api):
    created = post(lead_api, URL + "/reports", {"title": "March", "keyMessages": "On track."})
    assert created.status_code == 201, created.content
    report = created.json()
    assert (report["state"], report["title"], report["snapshot"]) == ("Draft", "March", None)
    assert created["ETag"] == '"1"'
    url = f"{URL}/reports/{report['id']}"
    assert post(lead_api, URL + "/reports", {"title": "Another"}).status_code == 409
    edited = patch(lead_api, url, {"keyMessages": "Still on track."}, HTTP_IF_MATCH='"1"')
    assert edited.status_code == 200
    assert patch(lead_api, url, {"title": "Z"}, HTTP_IF_MATCH='"1"').status_code == 412
    published = post(lead_api, url + "/publish", HTTP_IF_MATCH='"2"')
    assert published.status_code == 200, published.content
    body = published.json()
    assert body["state"] == "Published"
    assert body["snapshot"]["keyMessages"] == "Still on track."
    assert body["snapshot"]["status"]["derived"] == lead_api.get(URL).json()["derived"]
    assert body["effective"] == body["snapshot"]["status"]["effective"]
    for response in (
        patch(lead_api, url, {"title": "Rewrite"}),
        lead_api.delete(url),
        post(lead_api, url + "/publish"),
    ):
        assert response.status_code == 409
    assert lead_api.get(url).json()["snapshot"] == body["snapshot"]
    listed = lead_api.get(URL + "/reports").json()
    assert [(r["title"], r["state"]) for r in listed] == [("March", "Published")]
    assert lead_api.get(URL + "/reports?state=Draft").json() == []
    assert lead_api.get(URL + "/reports?state=Bogus").status_code == 422


def test_a_draft_is_deleted_with_204(lead_api):
    report = post(lead_api, URL + "/reports", {}).json()
    response = lead_api.delete(f"{URL}/reports/{report['id']}")
    assert response.status_code == 204
    assert response.content == b""
    assert not StatusReport.objects.exists()


def test_unknown_and_foreign_reports_are_404(cast, lead_api, bearer):
    assert lead_api.get(f"{URL}/reports/not-a-uuid").status_code == 404
    assert lead_api.get(f"{URL}/reports/00000000-0000-0000-0000-000000000000").status_code == 404
    outsider_report = post(
        Client(**bearer(cast.outsider)), "/api/v1/projects/OTHER/status/reports", {}
    ).json()
    assert lead_api.get(f"{URL}/reports/{outsider_report['id']}").status_code == 404
