"""What the OpenAPI document refuses in a body, the server refuses (422, the field named),
and what it allows is taken: the cases schemathesis's negative data found taken against the
document (an accountId that is an empty object, a template page's title that is not text, a
work package's empty id the document did not allow)."""

import json

import pytest

BASE = "/api/v1/projects/ALPHA"
NOT_TEXT = [{}, [], 0, False, True, 12.5]
SEATS = ["decisionAuthority", "projectManager", "customerRep", "supplierRep", "adoptionOwner"]


def _send(client, method, url, body, headers):
    return getattr(client, method)(
        url, data=json.dumps(body), content_type="application/json", **headers
    )


@pytest.mark.django_db
@pytest.mark.parametrize("value", NOT_TEXT)
def test_a_seat_whose_account_id_is_not_text_is_refused_at_every_seat(cast, client, bearer, value):
    lead = bearer(cast.lead)
    seat = {"accountId": value, "displayName": "Ann External", "email": "ann@example.com"}
    for name in SEATS:
        response = _send(client, "patch", f"{BASE}/charter", {name: seat}, lead)
        assert response.status_code == 422, (name, value, response.content[:300])
        assert list(response.json()["error"]["fields"]) == [f"{name}.accountId"]
    response = _send(
        client, "post", f"{BASE}/changes", {"summary": "More", "approverSeat": seat}, lead
    )
    assert response.status_code == 422, (value, response.content[:300])
    assert "approverSeat.accountId" in response.json()["error"]["fields"]


@pytest.mark.django_db
@pytest.mark.parametrize("value", [None, ""])
def test_an_empty_account_id_names_a_person_in_words(cast, client, bearer, value):
    seat = {"accountId": value, "displayName": "Ann External", "email": "ann@example.com"}
    response = _send(client, "patch", f"{BASE}/charter", {"adoptionOwner": seat}, bearer(cast.lead))
    assert response.status_code == 200, response.content[:300]
    assert response.json()["adoptionOwner"]["displayName"] == "Ann External"


@pytest.mark.django_db
@pytest.mark.parametrize("value", NOT_TEXT)
def test_a_template_page_title_that_is_not_text_is_refused(cast, client, bearer, value):
    body = {"templateKind": "boardPaper", "title": value}
    url = f"{BASE}/charter/supporting-links/from-template"
    response = _send(client, "post", url, body, bearer(cast.lead))
    assert response.status_code == 422, (value, response.content[:300])
    assert list(response.json()["error"]["fields"]) == ["title"]


@pytest.mark.django_db
def test_a_work_package_id_is_a_uuid_or_generated(cast, client, bearer):
    lead = bearer(cast.lead)
    url = f"{BASE}/work-packages"
    for number, value in enumerate(["", None]):
        response = _send(client, "post", url, {"name": f"Build {number}", "id": value}, lead)
        assert response.status_code == 201, response.content[:300]
        assert len(response.json()["id"]) == 36
    refused = _send(client, "post", url, {"name": "Build 9", "id": "not-a-uuid"}, lead)
    assert refused.status_code == 422 and list(refused.json()["error"]["fields"]) == ["id"]
