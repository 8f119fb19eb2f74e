"""GET and PATCH /projects/{key}/charter: defaults of a never-saved case, sanitised and capped
text, seats, supporting links, the kernel mirror, concurrency, audit; return notes."""

import json

import pytest

from charter.models import BusinessCase
from governance.models import AuditEntry
from governance.wiki.local.models import LocalWikiPage

URL = "/api/v1/projects/ALPHA/charter"


def patch(client, headers, body, **extra):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.patch(URL, data=data, content_type="application/json", **headers, **extra)


def test_never_saved_case_reads_as_the_defaults_and_writes_nothing(cast, client, bearer):
    response = client.get(URL, **bearer(cast.lead))
    assert response.status_code == 200
    assert response["ETag"] == '"1"'
    body = response.json()
    assert body["projectKey"] == "ALPHA"
    assert body["approvalStatus"] == "Exploring" and body["version"] == 1
    assert body["businessProblem"] == "" and body["supportingLinks"] == []
    assert body["decisionAuthority"] is None and body["steeringCommittee"] == []
    assert body["changeSaturation"] == "Unknown"
    assert body["adoptionGap"] is True and body["registersFrozen"] is False
    assert body["closeOut"] is None and body["returnNotes"] == []
    assert body["realisationConfidence"] == "Unknown"
    assert body["terminalDisposition"] is None
    assert body["firstSteercoAttendees"] == [] and body["approvedVersions"] == []
    assert body["availableActs"] == ["draft", "submit", "archive", "steerco-schedule"]
    assert not BusinessCase.objects.exists()


def test_viewer_sees_no_acts(cast, client, bearer):
    assert client.get(URL, **bearer(cast.viewer)).json()["availableActs"] == []


def test_legacy_objectives_surface_as_outcome(cast, client, bearer):
    BusinessCase.objects.create(project=cast.project, objectives="Legacy objective")
    assert client.get(URL, **bearer(cast.viewer)).json()["outcome"] == "Legacy objective"


def test_invalid_stored_saturation_reads_unknown_and_invalid_input_is_kept_as_unknown(
    cast, client, bearer
):
    BusinessCase.objects.create(project=cast.project, change_saturation="Extreme")
    assert client.get(URL, **bearer(cast.viewer)).json()["changeSaturation"] == "Unknown"
    response = patch(client, bearer(cast.lead), {"changeSaturation": "Huge"})
    assert response.status_code == 200 and response.json()["changeSaturation"] == "Unknown"
    response = patch(client, bearer(cast.lead), {"changeSaturation": "High"})
    assert response.json()["changeSaturation"] == "High"


def test_patch_trims_stamps_bumps_and_audits(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.editor),
        {"businessProblem": "  Slow claims  ", "theme": "Cost Out"},
        HTTP_IF_MATCH='"1"',
    )
    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    body = response.json()
    assert body["businessProblem"] == "Slow claims"
    assert body["updatedByAccountId"] == cast.editor.account_id and body["updatedAt"]
    entry = AuditEntry.objects.get(kind="charter.updated")
    assert entry.changes["businessProblem"] == {"before": "", "after": "Slow claims"}
    assert entry.changes["theme"] == {"before": "", "after": "Cost Out"}
    # The same values again change nothing and write nothing.
    again = patch(client, bearer(cast.editor), {"businessProblem": "Slow claims"})
    assert again["ETag"] == '"2"'
    assert AuditEntry.objects.filter(kind="charter.updated").count() == 1


def test_theme_is_free_text(cast, client, bearer):
    response = patch(client, bearer(cast.lead), {"theme": "Sustainability"})
    assert response.json()["theme"] == "Sustainability"


@pytest.mark.parametrize(
    "field",
    [
        "businessProblem",
        "outcome",
        "returnExpected",
        "scopeInBounds",
        "scopeBoundaries",
        "adoptionAffected",
        "adoptionKpi",
    ],
)
def test_prose_over_the_cap_is_refused_naming_the_field(field, cast, client, bearer):
    response = patch(client, bearer(cast.lead), {field: "x" * 2001, "theme": "Ok"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation"
    assert set(error["fields"]) == {field}
    assert "2000" in error["fields"][field][0]
    assert not BusinessCase.objects.exists()
    assert patch(client, bearer(cast.lead), {field: "x" * 2000}).status_code == 200


def test_unknown_fields_refused_derived_ignored_lifecycle_fields_guarded(cast, client, bearer):
    response = patch(client, bearer(cast.lead), {"colour": "blue", "approvalStatus": "Approved"})
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"colour", "approvalStatus"}
    current = client.get(URL, **bearer(cast.lead)).json()
    current["businessProblem"] = "Round trip"
    response = patch(client, bearer(cast.lead), current)
    assert response.status_code == 200, response.content
    assert response.json()["businessProblem"] == "Round trip"
    assert response.json()["adoptionGap"] is True


def test_stale_if_match_is_412_and_changes_nothing(cast, client, bearer):
    patch(client, bearer(cast.lead), {"businessProblem": "First"})
    response = patch(
        client, bearer(cast.editor), {"businessProblem": "Second"}, HTTP_IF_MATCH='"1"'
    )
    assert response.status_code == 412 and response.json()["error"]["code"] == "stale"
    assert BusinessCase.objects.get().business_problem == "First"


def test_body_must_be_an_object(cast, client, bearer):
    assert patch(client, bearer(cast.lead), "[1, 2]").status_code == 400
    assert patch(client, bearer(cast.lead), "not json").status_code == 400


def test_viewer_sponsor_and_site_admin_cannot_edit(cast, client, bearer):
    for user in (cast.viewer, cast.sponsor, cast.site_admin):
        assert patch(client, bearer(user), {"businessProblem": "x"}).status_code == 403
    assert not BusinessCase.objects.exists()


def test_edit_is_refused_once_submitted(cast, client, bearer, arrange):
    arrange("Submitted")
    response = patch(client, bearer(cast.lead), {"businessProblem": "Late edit"})
    assert response.status_code == 409
    assert BusinessCase.objects.get().business_problem == ""


def test_seats_take_the_tracker_name_or_an_external_person(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {
            "decisionAuthority": {"accountId": cast.sponsor.account_id, "displayName": "Forged"},
            "projectManager": cast.editor.account_id,
            "supplierRep": {"displayName": "Nadia Brooks", "email": "nadia@vendor.example"},
            "customerRep": None,
        },
    )
    body = response.json()
    assert body["decisionAuthority"] == {
        "accountId": cast.sponsor.account_id,
        "displayName": "Sam Sponsor",
        "avatarUrl": "",
    }
    assert body["projectManager"]["displayName"] == "Eddie Editor"
    assert body["supplierRep"] == {
        "accountId": None,
        "displayName": "Nadia Brooks",
        "email": "nadia@vendor.example",
    }
    assert body["customerRep"] is None


def test_bad_seats_are_named(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {
            "decisionAuthority": {"displayName": "Board", "email": "board@example.com"},
            "projectManager": "no-such-account",
            "adoptionOwner": {"displayName": "", "email": "x@example.com"},
            "customerRep": 42,
        },
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {
        "decisionAuthority",
        "projectManager",
        "adoptionOwner.displayName",
        "customerRep",
    }


def test_sponsor_and_steering_committee_are_mirrored_for_the_gate(cast, client, bearer):
    patch(
        client,
        bearer(cast.lead),
        {
            "decisionAuthority": cast.viewer.account_id,
            "steeringCommittee": [
                {"accountId": cast.sponsor.account_id, "role": "Chair"},
                cast.pmo.account_id,
                {
                    "displayName": "Outside adviser",
                    "email": "adviser@example.com",
                    "role": "Adviser",
                },
            ],
        },
    )
    cast.project.refresh_from_db()
    assert cast.project.sponsor_account_id == cast.viewer.account_id
    assert cast.project.steering_account_ids == [cast.sponsor.account_id, cast.pmo.account_id]
    body = client.get(URL, **bearer(cast.viewer)).json()
    members = body["steeringCommittee"]
    assert [m["displayName"] for m in members] == ["Sam Sponsor", "Priya PMO", "Outside adviser"]
    assert all(m["id"] for m in members) and members[0]["role"] == "Chair"
    assert "approve" not in body["availableActs"]


def test_a_steering_member_appears_once(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {"steeringCommittee": [cast.sponsor.account_id, {"accountId": cast.sponsor.account_id}]},
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"steeringCommittee[1]"}


def test_design_principles_are_a_normalised_list(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {"designPrinciples": ["  Buy before build ", "", "buy before build", "One source"]},
    )
    assert response.json()["designPrinciples"] == ["Buy before build", "One source"]


def test_supporting_links_http_only_with_types(cast, client, bearer):
    response = patch(
        client,
        bearer(cast.lead),
        {
            "supportingLinks": [
                {"label": "Proposal", "url": "https://docs.example.com/p", "type": "link"},
                {"label": "Bad", "url": "javascript:alert(1)", "type": "link"},
                {"label": "Ftp", "url": "ftp://files.example.com/x"},
                {"label": "Odd", "url": "https://x.example.com", "type": "sharepoint"},
            ]
        },
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {
        "supportingLinks[1].url",
        "supportingLinks[2].url",
        "supportingLinks[3].type",
    }
    response = patch(
        client,
        bearer(cast.lead),
        {"supportingLinks": [{"label": "Proposal", "url": "https://docs.example.com/p"}]},
    )
    link = response.json()["supportingLinks"][0]
    assert link["type"] == "link" and link["id"]
    assert set(link) == {"id", "label", "url", "type"}


def test_a_wiki_link_is_checked_against_the_wiki(cast, client, bearer):
    page = LocalWikiPage.objects.create(space_key="GOV", title="Board paper", body="")
    response = patch(
        client,
        bearer(cast.lead),
        {"supportingLinks": [{"type": "confluence", "pageId": str(page.pk)}]},
    )
    assert response.status_code == 200, response.content
    link = response.json()["supportingLinks"][0]
    assert link["label"] == "Board paper" and link["spaceKey"] == "GOV"
    assert link["url"] == f"http://testserver/wiki/pages/{page.pk}/"
    response = patch(
        client,
        bearer(cast.lead),
        {"supportingLinks": [{"type": "confluence", "pageId": "999999", "url": "https://x.test"}]},
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"supportingLinks[0].pageId"}


def test_create_board_paper_from_template(cast, client, bearer, settings):
    response = client.post(
        f"{URL}/supporting-links/from-template",
        data=json.dumps({"templateKind": "boardPaper"}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 201, response.content
    link = response.json()
    page = LocalWikiPage.objects.get()
    assert page.title == "Board paper: Alpha programme (ALPHA)"
    assert page.space_key == settings.WIKI_SPACE_KEY
    assert page.labels == [settings.WIKI_PMO_LABEL, "governance-board-paper"]
    assert link["pageId"] == str(page.pk) and link["templateKind"] == "boardPaper"
    assert link["type"] == "confluence"
    body = client.get(URL, **bearer(cast.lead)).json()
    assert body["supportingLinks"] == [link]
    assert body["financialCase"]["boardPaperPageId"] == str(page.pk)


def test_lessons_template_only_during_close_out(cast, client, bearer, arrange):
    def create():
        return client.post(
            f"{URL}/supporting-links/from-template",
            data=json.dumps({"templateKind": "lessons"}),
            content_type="application/json",
            **bearer(cast.lead),
        )

    arrange("Draft")
    assert create().status_code == 409
    assert not LocalWikiPage.objects.exists()
    from tests.charter.conftest import closeout_record

    arrange("Approved", close_out=closeout_record())
    response = create()
    assert response.status_code == 201
    assert LocalWikiPage.objects.get().labels[1] == "governance-lessons"


def test_return_note_addressed_toggle(cast, client, bearer, arrange):
    arrange(
        "Draft",
        return_notes=[
            {
                "id": "n1",
                "section": "outcome",
                "ask": "More",
                "severity": "Minor",
                "addressed": False,
            }
        ],
    )
    url = f"{URL}/return-notes/n1"

    def send(user, body):
        return client.patch(
            url, data=json.dumps(body), content_type="application/json", **bearer(user)
        )

    assert send(cast.viewer, {"addressed": True}).status_code == 403
    assert send(cast.lead, {"addressed": "maybe"}).status_code == 422
    response = send(cast.editor, {"addressed": True})
    assert response.status_code == 200 and response.json()["addressed"] is True
    assert BusinessCase.objects.get().return_notes[0]["addressed"] is True
    assert send(cast.editor, {"addressed": False}).json()["addressed"] is False
    assert (
        client.patch(
            f"{URL}/return-notes/nope",
            data="{}",
            content_type="application/json",
            **bearer(cast.lead),
        ).status_code
        == 404
    )
    BusinessCase.objects.filter(project=cast.project).update(approval_status="Submitted")
    assert send(cast.editor, {"addressed": True}).status_code == 409


def test_create_from_template_refuses_unknown_fields_after_the_person(cast, client, bearer):
    body = json.dumps({"templateKind": "boardPaper", "colour": "blue"})
    url = f"{URL}/supporting-links/from-template"
    viewer = client.post(url, data=body, content_type="application/json", **bearer(cast.viewer))
    assert viewer.status_code == 403
    response = client.post(url, data=body, content_type="application/json", **bearer(cast.lead))
    assert response.status_code == 422
    assert response.json()["error"]["fields"] == {"colour": ["Unknown field."]}
    assert not LocalWikiPage.objects.exists()
