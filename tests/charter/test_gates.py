"""The spec's two hard content gates (the adoption inputs at submission, with the sponsor
seat; lessons on a Not-realised verdict) and the best-effort approval nudge on submission."""

import json

import pytest

from charter.models import BusinessCase
from governance.models import AuditEntry, OutboundTask
from governance.wiki.local.backend import LocalWiki
from governance.wiki.local.models import LocalWikiComment, LocalWikiPage
from tests.charter.conftest import seat

ALL_MISSING = {
    "adoptionAffected",
    "adoptionKpi",
    "changeSaturation",
    "adoptionOwner",
    "decisionAuthority",
}


def act(client, headers, name, body=None):
    return client.post(
        f"/api/v1/projects/ALPHA/charter/{name}",
        data=json.dumps(body or {}),
        content_type="application/json",
        **headers,
    )


def test_submitting_an_empty_case_names_every_missing_input(cast, client, bearer):
    response = act(client, bearer(cast.lead), "submit")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "gate"
    assert set(error["fields"]) == ALL_MISSING
    assert not BusinessCase.objects.exists()  # not even the row the write would have created
    assert not AuditEntry.objects.filter(target_type="businessCase").exists()


@pytest.mark.parametrize(
    ("overrides", "missing"),
    [
        ({"adoption_affected": ""}, "adoptionAffected"),
        ({"adoption_kpi": "   "}, "adoptionKpi"),
        ({"change_saturation": "Unknown"}, "changeSaturation"),
        ({"change_saturation": ""}, "changeSaturation"),
        ({"adoption_owner": None}, "adoptionOwner"),
        ({"adoption_owner": {"accountId": None, "displayName": "X", "email": ""}}, "adoptionOwner"),
        ({"decision_authority": None}, "decisionAuthority"),
    ],
)
def test_each_missing_input_blocks_submission(overrides, missing, cast, arrange, client, bearer):
    case = arrange("Draft", **overrides)
    response = act(client, bearer(cast.editor), "submit")
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {missing}
    stored = BusinessCase.objects.get(pk=case.pk)
    assert stored.approval_status == "Draft" and stored.revision == case.revision


def test_an_external_adoption_owner_with_an_address_passes(cast, arrange, client, bearer):
    arrange(
        "Draft",
        adoption_owner={"accountId": None, "displayName": "Ops lead", "email": "ops@example.com"},
    )
    response = act(client, bearer(cast.lead), "submit")
    assert response.status_code == 200
    body = response.json()
    assert body["approvalStatus"] == "Submitted" and body["submittedAt"]
    assert body["adoptionGap"] is False


def test_not_realised_needs_lessons(cast, arrange, client, bearer):
    case = arrange("InRealisation")
    response = act(client, bearer(cast.sponsor), "verdict", {"verdict": "NotRealised"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "gate" and set(error["fields"]) == {"realisationLessons"}
    assert BusinessCase.objects.get(pk=case.pk).approval_status == "InRealisation"
    response = act(
        client,
        bearer(cast.sponsor),
        "verdict",
        {"verdict": "NotRealised", "realisationLessons": "   "},
    )
    assert response.status_code == 422
    response = act(
        client,
        bearer(cast.sponsor),
        "verdict",
        {"verdict": "NotRealised", "realisationLessons": "Own adoption."},
    )
    body = response.json()
    assert body["approvalStatus"] == "NotRealised"
    assert body["realisationDecidedByAccountId"] == cast.sponsor.account_id
    assert body["realisationLessons"] == "Own adoption."


def test_realised_needs_no_lessons_and_a_bad_verdict_is_refused(cast, arrange, client, bearer):
    arrange("InRealisation")
    assert act(client, bearer(cast.sponsor), "verdict", {"verdict": "Maybe"}).status_code == 422
    response = act(client, bearer(cast.sponsor), "verdict", {"verdict": "Realised"})
    assert response.json()["approvalStatus"] == "Realised"


# --- the approval nudge ----------------------------------------------------------------------


def _with_board_paper(arrange):
    page = LocalWikiPage.objects.create(space_key="GOV", title="Board paper", body="")
    arrange("Draft", financial_case={"mode": "builtin", "boardPaperPageId": str(page.pk)})
    return page


def test_submit_nudges_the_sponsor_on_the_board_paper(
    cast, arrange, client, bearer, django_capture_on_commit_callbacks
):
    page = _with_board_paper(arrange)
    with django_capture_on_commit_callbacks(execute=True):
        response = act(client, bearer(cast.lead), "submit")
    assert response.status_code == 200
    comment = LocalWikiComment.objects.get(page=page)
    assert comment.mention_account_ids == [cast.sponsor.account_id]
    assert "ALPHA" in comment.body
    assert OutboundTask.objects.get(name="charter.approval_nudge").state == "done"


def test_a_failing_nudge_never_blocks_submit(
    cast, arrange, client, bearer, django_capture_on_commit_callbacks, monkeypatch
):
    _with_board_paper(arrange)

    def down(self, **kwargs):
        raise ConnectionError("wiki down")

    monkeypatch.setattr(LocalWiki, "add_footer_comment", down)
    with django_capture_on_commit_callbacks(execute=True):
        response = act(client, bearer(cast.lead), "submit")
    assert response.status_code == 200
    assert BusinessCase.objects.get().approval_status == "Submitted"
    task = OutboundTask.objects.get(name="charter.approval_nudge")
    assert task.state == "pending" and "wiki down" in task.last_error  # retried later
    assert not LocalWikiComment.objects.exists()


def test_the_nudge_is_idempotent(cast, arrange, client, bearer, django_capture_on_commit_callbacks):
    from charter.tasks import approval_nudge

    page = _with_board_paper(arrange)
    with django_capture_on_commit_callbacks(execute=True):
        act(client, bearer(cast.lead), "submit")
    approval_nudge({"projectKey": "ALPHA"})  # a retried or duplicated task
    assert LocalWikiComment.objects.filter(page=page).count() == 1


def test_no_board_paper_no_nudge(cast, arrange, client, bearer, django_capture_on_commit_callbacks):
    arrange("Draft", decision_authority=seat(cast.sponsor))
    with django_capture_on_commit_callbacks(execute=True):
        assert act(client, bearer(cast.lead), "submit").status_code == 200
    assert not LocalWikiComment.objects.exists()
    assert OutboundTask.objects.get(name="charter.approval_nudge").state == "done"
