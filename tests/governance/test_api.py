"""The JSON API frame: authentication, the one error body, editors, audit, site settings."""

import json

import pytest
from django.test import Client, RequestFactory

from config.api import api
from governance.concurrency import check_version, etag, parse_if_match
from governance.errors import BadRequest, Stale
from governance.models import ApiToken, AuditEntry, EditorNomination, SiteSettings
from governance.services import token_create, token_revoke
from governance.tracker.local import scripting
from tests.conftest import set_governance_group

CODES = {
    "bad_request",
    "unauthenticated",
    "forbidden",
    "not_found",
    "conflict",
    "frozen",
    "stale",
    "validation",
    "gate",
}


def error_of(response, status, code):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["code"] in CODES
    assert body["error"]["message"]
    return body["error"]


def put_json(client, url, body, **headers):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.put(url, data=data, content_type="application/json", **headers)


def test_no_credentials_is_401_unauthenticated(cast):
    error_of(Client().get("/api/v1/projects"), 401, "unauthenticated")
    error_of(Client().put("/api/v1/projects/ALPHA/editors", data="{}"), 401, "unauthenticated")


def test_bad_and_revoked_tokens_are_401(cast, bearer):
    client = Client()
    error_of(
        client.get("/api/v1/me", HTTP_AUTHORIZATION="Bearer gov_nonsense"), 401, "unauthenticated"
    )
    token, raw = token_create(user=cast.viewer, name="script")
    assert client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    token_revoke(user=cast.viewer, token_id=token.pk)
    error_of(client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {raw}"), 401, "unauthenticated")


def test_tokens_are_stored_hashed(cast):
    token, raw = token_create(user=cast.viewer, name="script")
    stored = ApiToken.objects.get(pk=token.pk)
    assert raw not in (stored.digest, stored.prefix) and len(stored.digest) == 64
    assert raw.startswith(stored.prefix)


def test_me_describes_the_caller(cast, bearer):
    body = Client().get("/api/v1/me", **bearer(cast.site_admin)).json()
    assert body == {
        "accountId": cast.site_admin.account_id,
        "displayName": "Ada Admin",
        "isSiteAdmin": True,
        "agentAccess": True,
    }
    assert Client().get("/api/v1/me", **bearer(cast.lead)).json()["agentAccess"] is False


def test_project_list_and_detail(cast, bearer):
    listed = Client().get("/api/v1/projects", **bearer(cast.viewer)).json()["items"]
    keys = [p["projectKey"] for p in listed]
    assert keys == ["ALPHA"]
    detail = Client().get("/api/v1/projects/ALPHA", **bearer(cast.editor)).json()
    assert detail["leadAccountId"] == cast.lead.account_id
    assert detail["editorAccountIds"] == [cast.editor.account_id]
    assert detail["caller"] == {"canEdit": True, "isLead": False, "isSponsor": False}
    sponsor = Client().get("/api/v1/projects/ALPHA", **bearer(cast.sponsor)).json()
    assert sponsor["caller"] == {"canEdit": False, "isLead": False, "isSponsor": True}


def test_hidden_and_missing_projects_look_the_same(cast, bearer):
    hidden = error_of(
        Client().get("/api/v1/projects/ALPHA", **bearer(cast.outsider)), 404, "not_found"
    )
    missing = error_of(
        Client().get("/api/v1/projects/NOPE", **bearer(cast.outsider)), 404, "not_found"
    )
    assert hidden["message"].replace("ALPHA", "X") == missing["message"].replace("NOPE", "X")


def test_body_must_be_a_json_object(cast, bearer):
    url = "/api/v1/projects/ALPHA/editors"
    for body in ("[1, 2]", '"text"', "not json", "{", "3"):
        error_of(put_json(Client(), url, body, **bearer(cast.lead)), 400, "bad_request")


def test_viewer_and_site_admin_writes_are_forbidden(cast, bearer):
    url = "/api/v1/projects/ALPHA/editors"
    for user in (cast.viewer, cast.site_admin, cast.editor, cast.sponsor):
        error_of(put_json(Client(), url, {"accountIds": []}, **bearer(user)), 403, "forbidden")
    assert EditorNomination.objects.filter(project=cast.project).count() == 1


def test_lead_replaces_editors_and_it_is_audited(cast, bearer):
    url = "/api/v1/projects/ALPHA/editors"
    ids = [cast.viewer.account_id, cast.site_admin.account_id, cast.viewer.account_id]
    response = put_json(Client(), url, {"accountIds": ids}, **bearer(cast.lead))
    assert response.status_code == 200
    assert response.json()["editorAccountIds"] == [
        cast.viewer.account_id,
        cast.site_admin.account_id,
    ]
    entry = AuditEntry.objects.get(kind="project.editors_changed")
    assert entry.actor_account_id == cast.lead.account_id
    assert entry.project_key == "ALPHA" and entry.target_type == "project"
    assert entry.changes["editorAccountIds"]["before"] == [cast.editor.account_id]
    detail = Client().get("/api/v1/projects/ALPHA", **bearer(cast.site_admin)).json()
    assert detail["caller"]["canEdit"] is True


def test_editor_validation_names_each_bad_entry_and_changes_nothing(cast, bearer):
    url = "/api/v1/projects/ALPHA/editors"
    response = put_json(
        Client(), url, {"accountIds": [cast.viewer.account_id, "nobody", 7]}, **bearer(cast.lead)
    )
    error = error_of(response, 422, "validation")
    assert set(error["fields"]) == {"accountIds[1]", "accountIds[2]"}
    error_of(put_json(Client(), url, {}, **bearer(cast.lead)), 422, "validation")
    error_of(put_json(Client(), url, {"accountIds": "x"}, **bearer(cast.lead)), 422, "validation")
    assert list(EditorNomination.objects.values_list("account_id", flat=True)) == [
        cast.editor.account_id
    ]
    assert not AuditEntry.objects.filter(kind="project.editors_changed").exists()


def test_session_auth_needs_csrf_for_writes(cast):
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.lead)
    assert client.get("/api/v1/projects/ALPHA").status_code == 200
    response = put_json(client, "/api/v1/projects/ALPHA/editors", {"accountIds": []})
    error = error_of(response, 403, "forbidden")
    assert "CSRF" in error["message"]
    client.get("/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = put_json(
        client, "/api/v1/projects/ALPHA/editors", {"accountIds": []}, HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 200


def test_audit_is_newest_first_and_filterable(cast, bearer):
    url = "/api/v1/projects/ALPHA/editors"
    put_json(Client(), url, {"accountIds": [cast.viewer.account_id]}, **bearer(cast.lead))
    put_json(Client(), url, {"accountIds": []}, **bearer(cast.lead))
    entries = Client().get("/api/v1/projects/ALPHA/audit", **bearer(cast.viewer)).json()
    assert [e["changes"]["editorAccountIds"]["after"] for e in entries] == [
        [],
        [cast.viewer.account_id],
    ]
    assert set(entries[0]) == {
        "id",
        "at",
        "actorAccountId",
        "projectKey",
        "kind",
        "targetType",
        "targetId",
        "changes",
    }
    by_kind = (
        Client().get("/api/v1/projects/ALPHA/audit?kind=nothing", **bearer(cast.viewer)).json()
    )
    assert by_kind == []
    by_actor = (
        Client()
        .get(
            f"/api/v1/projects/ALPHA/audit?actorAccountId={cast.lead.account_id}&limit=1",
            **bearer(cast.viewer),
        )
        .json()
    )
    assert len(by_actor) == 1
    error_of(
        Client().get("/api/v1/projects/ALPHA/audit?limit=x", **bearer(cast.viewer)),
        422,
        "validation",
    )


def test_site_settings_read_by_all_written_by_site_admins(cast, bearer):
    body = Client().get("/api/v1/site-settings", **bearer(cast.site_admin)).json()
    assert body["governanceGroup"] is None
    assert [t["name"] for t in body["themes"]][:2] == ["Cost Out", "Revenue Growth"]
    body = Client().get("/api/v1/site-settings", **bearer(cast.viewer)).json()
    assert [t["name"] for t in body["themes"]][:2] == ["Cost Out", "Revenue Growth"]
    response = Client().patch(
        "/api/v1/site-settings",
        data={"governanceGroup": "pmo"},
        content_type="application/json",
        **bearer(cast.lead),
    )
    error_of(response, 403, "forbidden")
    response = Client().patch(
        "/api/v1/site-settings",
        data={"governanceGroup": "nope"},
        content_type="application/json",
        **bearer(cast.site_admin),
    )
    assert error_of(response, 422, "validation")["fields"] == {
        "governanceGroup": ["The tracker has no group called 'nope'."]
    }
    response = Client().patch(
        "/api/v1/site-settings",
        data={"governanceGroup": "pmo"},
        content_type="application/json",
        **bearer(cast.site_admin),
    )
    assert response.json()["governanceGroup"] == "pmo"
    assert AuditEntry.objects.filter(kind="site_settings.updated").exists()


def test_themes_are_capped_at_twelve_and_unique(cast, bearer):
    def patch(themes):
        return Client().patch(
            "/api/v1/site-settings",
            data={"themes": themes},
            content_type="application/json",
            **bearer(cast.site_admin),
        )

    error_of(patch([{"name": f"T{i}"} for i in range(13)]), 422, "validation")
    error = error_of(patch([{"name": "A"}, {"name": "a"}]), 422, "validation")
    assert "themes[1].name" in error["fields"]
    ok = patch([{"name": "Cost Out", "enabled": False}, {"name": "Net Zero", "enabled": True}])
    assert ok.status_code == 200
    assert SiteSettings.load().themes == [
        {"name": "Cost Out", "enabled": False},
        {"name": "Net Zero", "enabled": True},
    ]


def test_thresholds_validate_order(cast, bearer):
    response = Client().patch(
        "/api/v1/site-settings",
        data={"ragThresholds": {"costGreenMaxPct": 20}},
        content_type="application/json",
        **bearer(cast.site_admin),
    )
    assert "ragThresholds.costAmberMaxPct" in error_of(response, 422, "validation")["fields"]


def test_group_gate_hides_projects_from_the_api(cast, bearer):
    set_governance_group("pmo")
    assert Client().get("/api/v1/projects", **bearer(cast.viewer)).json() == {
        "items": [],
        "next": None,
    }
    error_of(Client().get("/api/v1/projects/ALPHA", **bearer(cast.viewer)), 404, "not_found")
    assert [
        p["projectKey"]
        for p in Client().get("/api/v1/projects", **bearer(cast.pmo)).json()["items"]
    ] == ["ALPHA"]
    scripting.ensure_group("pmo", members=["viewer"])
    assert Client().get("/api/v1/projects/ALPHA", **bearer(cast.viewer)).status_code == 200


def test_openapi_document_describes_the_api(db):
    schema = Client().get("/api/v1/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    for path in (
        "/api/v1/me",
        "/api/v1/projects",
        "/api/v1/projects/{key}/editors",
        "/api/v1/projects/{key}/audit",
    ):
        assert path in schema["paths"]
    assert Client().get("/api/v1/docs").status_code == 200


def test_if_match_and_stale_mapping():
    assert parse_if_match(None) is None
    assert parse_if_match("*") is None
    assert parse_if_match('"4"') == 4
    assert parse_if_match('W/"4"') == 4
    assert etag(4) == '"4"'
    # An unreadable If-Match is refused where the revision is checked (after who may act).
    for unreadable in ("4", '"' + "9" * 5000 + '"', '"-1"', '"٣"'):
        with pytest.raises(BadRequest):
            check_version(3, parse_if_match(unreadable))
    check_version(3, None)
    check_version(3, 3)
    with pytest.raises(Stale):
        check_version(3, 2)
    response = api.on_exception(RequestFactory().patch("/api/v1/x"), Stale())
    assert response.status_code == 412
    assert json.loads(response.content)["error"]["code"] == "stale"


def test_project_etag_versions_the_editor_list(cast, bearer):
    url = "/api/v1/projects/ALPHA/editors"
    first = Client().get("/api/v1/projects/ALPHA", **bearer(cast.lead))
    etag = first["ETag"]
    assert etag == '"1"'
    response = put_json(
        Client(),
        url,
        {"accountIds": [cast.viewer.account_id]},
        HTTP_IF_MATCH=etag,
        **bearer(cast.lead),
    )
    assert response.status_code == 200 and response["ETag"] == '"2"'
    stale = put_json(Client(), url, {"accountIds": []}, HTTP_IF_MATCH=etag, **bearer(cast.lead))
    error_of(stale, 412, "stale")
    assert Client().get("/api/v1/projects/ALPHA", **bearer(cast.lead)).json()[
        "editorAccountIds"
    ] == [cast.viewer.account_id]
    error_of(
        put_json(Client(), url, {"accountIds": []}, HTTP_IF_MATCH="2", **bearer(cast.lead)),
        400,
        "bad_request",
    )


def test_site_settings_honour_if_match(cast, bearer):
    etag = Client().get("/api/v1/site-settings", **bearer(cast.site_admin))["ETag"]

    def patch(body, tag):
        return Client().patch(
            "/api/v1/site-settings",
            data=body,
            content_type="application/json",
            HTTP_IF_MATCH=tag,
            **bearer(cast.site_admin),
        )

    assert patch({"brCadenceDefault": "Annual"}, etag).status_code == 200
    error_of(patch({"brCadenceDefault": "Monthly"}, etag), 412, "stale")
    assert SiteSettings.load().br_cadence_default == "Annual"


def test_unknown_paths_and_methods_answer_the_error_body(cast, bearer):
    error_of(Client().get("/api/v1/nothing-here", **bearer(cast.viewer)), 404, "not_found")
    response = Client().delete("/api/v1/projects/ALPHA", **bearer(cast.viewer))
    error = error_of(response, 405, "bad_request")
    assert "GET" in error["message"] and "GET" in response["Allow"]


def test_a_partial_thresholds_patch_keeps_the_other_overrides(cast, bearer):
    def patch(body):
        return Client().patch(
            "/api/v1/site-settings",
            data={"ragThresholds": body},
            content_type="application/json",
            **bearer(cast.site_admin),
        )

    assert patch({"costAmberMaxPct": 12}).status_code == 200
    assert patch({"costGreenMaxPct": 7}).status_code == 200
    assert SiteSettings.load().rag_thresholds == {"costAmberMaxPct": 12, "costGreenMaxPct": 7}
    # The order is checked against the stored overrides, not only the defaults.
    error_of(patch({"costGreenMaxPct": 13}), 422, "validation")
    assert patch({"costAmberMaxPct": None}).status_code == 200
    assert SiteSettings.load().rag_thresholds == {"costGreenMaxPct": 7}
