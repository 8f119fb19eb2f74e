"""Decisions through their services: the append-only log, pending vs made, decision.made,
notes, minutes references, evidence links, legacy fields, roles and freeze."""

import datetime as dt

import pytest
from django.utils import timezone

from governance.errors import Conflict, Forbidden, Frozen, Stale, ValidationFailed
from governance.models import AuditEntry
from governance.permissions import caller_for
from governance.wiki.local.models import LocalWikiPage
from registers import selectors
from registers.models import Decision
from registers.services import decision_append_note, decision_create, decision_update
from tests.factories import DecisionFactory, ProjectFactory, SteeringMinutesFactory


def lead(cast):
    return caller_for(cast.lead, cast.project)


def create(cast, **data):
    return decision_create(caller=lead(cast), data={"decision": "Use vendor A", **data})


def update(cast, decision, caller=None, **data):
    return decision_update(caller=caller or lead(cast), decision_id=decision.pk, data=data)


def refused(excinfo):
    return set(excinfo.value.fields)


def test_created_pending_proposed_with_recorder_and_no_maker(cast):
    decision = create(cast)
    assert decision.made_on is None and decision.status == "Proposed"
    assert decision.made_by_account_id is None  # no default
    assert decision.recorded_by == decision.created_by_account_id == cast.lead.account_id
    assert AuditEntry.objects.get(kind="decision.created").target_id == str(decision.pk)


def test_every_bad_field_is_named(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        decision_create(
            caller=lead(cast),
            data={
                "decision": "d" * 201,
                "decisionNotes": "n" * 2001,
                "rationale": "r" * 2001,
                "madeOn": "yesterday",
                "madeByAccountId": "nobody",
                "minutesRef": {"id": "not-ours"},
                "evidenceLinks": [{"url": "ftp://files"}, {"url": "https://ok.example"}, 5],
                "outcome": "x",
            },
        )
    assert refused(excinfo) == {
        "decision",
        "decisionNotes",
        "rationale",
        "madeOn",
        "madeByAccountId",
        "minutesRef",
        "evidenceLinks[0].url",
        "evidenceLinks[2]",
        "outcome",
    }
    assert not Decision.objects.exists()


def test_decision_text_is_required(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        decision_create(caller=lead(cast), data={})
    assert refused(excinfo) == {"decision"}


def test_made_on_cannot_be_in_the_future(cast):
    tomorrow = timezone.localdate() + dt.timedelta(days=1)
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, madeOn=tomorrow.isoformat())
    assert refused(excinfo) == {"madeOn"}


def test_pending_decision_is_editable_and_recorded_by_the_last_writer(cast):
    decision = create(cast)
    editor = caller_for(cast.editor, cast.project)
    decision = update(cast, decision, caller=editor, rationale="Cheaper")
    assert decision.rationale == "Cheaper" and decision.recorded_by == cast.editor.account_id
    entry = AuditEntry.objects.get(kind="decision.updated")
    assert entry.changes["recordedBy"]["after"] == cast.editor.account_id


def test_filling_made_on_takes_the_decision_audited_as_decision_made(cast):
    decision = create(cast)
    decision = update(cast, decision, madeOn="2026-02-03", madeByAccountId=cast.sponsor.account_id)
    assert decision.made_on == dt.date(2026, 2, 3)
    entry = AuditEntry.objects.get(kind="decision.made")
    assert entry.changes["madeOn"] == {"before": None, "after": "2026-02-03"}
    assert entry.changes["madeByAccountId"]["after"] == cast.sponsor.account_id


def test_made_decision_refuses_update(cast):
    decision = create(cast, madeOn="2026-01-10")
    for data in ({"rationale": "later"}, {"madeOn": None}, {}):
        with pytest.raises(Conflict):
            update(cast, decision, **data)
    assert Decision.objects.get().rationale == ""


def test_made_decision_accepts_appended_notes_with_server_author_and_time(cast):
    decision = create(cast, madeOn="2026-01-10")
    editor = caller_for(cast.editor, cast.project)
    decision = decision_append_note(caller=editor, decision_id=decision.pk, text_value="  Typo  ")
    decision = decision_append_note(caller=lead(cast), decision_id=decision.pk, text_value="More")
    assert [n["text"] for n in decision.notes] == ["Typo", "More"]
    first = decision.notes[0]
    assert first["authorAccountId"] == cast.editor.account_id and first["id"] and first["at"]
    assert decision.revision == 3
    assert AuditEntry.objects.filter(kind="decision.note_added").count() == 2


def test_note_needs_text_and_an_editor(cast):
    decision = create(cast)
    with pytest.raises(ValidationFailed) as excinfo:
        decision_append_note(caller=lead(cast), decision_id=decision.pk, text_value=" ")
    assert refused(excinfo) == {"text"}
    with pytest.raises(ValidationFailed):
        decision_append_note(caller=lead(cast), decision_id=decision.pk, text_value="x" * 2001)
    with pytest.raises(Forbidden):
        decision_append_note(
            caller=caller_for(cast.viewer, cast.project), decision_id=decision.pk, text_value="x"
        )


def test_client_sent_notes_and_legacy_fields_are_ignored(cast):
    decision = create(
        cast,
        notes=[{"text": "forged"}],
        status="Approved",
        ownerAccountId=cast.viewer.account_id,
        approverAccountId=cast.viewer.account_id,
        decidedAt="2020-01-01T00:00:00Z",
        riskId="r",
        treatedRiskId="r",
        state="Made",
        recordedBy="someone",
    )
    assert decision.notes == [] and decision.status == "Proposed"
    assert (decision.owner_account_id, decision.approver_account_id, decision.decided_at) == (
        None,
        None,
        None,
    )
    assert (decision.risk_id, decision.treated_risk_id) == (None, None)
    assert decision.recorded_by == cast.lead.account_id


def test_legacy_fields_stay_readable_and_are_never_written(cast):
    legacy = DecisionFactory(
        project=cast.project,
        owner_account_id="legacy-owner",
        approver_account_id="legacy-approver",
        approver_seat={"accountId": "legacy-approver", "displayName": "Old"},
        status="Approved",
    )
    updated = update(cast, legacy, rationale="Still pending", status="Proposed")
    assert (updated.owner_account_id, updated.approver_account_id, updated.status) == (
        "legacy-owner",
        "legacy-approver",
        "Approved",
    )


def test_minutes_ref_must_be_the_projects_own_minutes(cast):
    minutes = SteeringMinutesFactory(
        project=cast.project, title="Steerco 3", url="https://wiki.example/3", page_id="42"
    )
    foreign = SteeringMinutesFactory(project=ProjectFactory(lead=cast.outsider))
    decision = create(cast, minutesRef={"id": str(minutes.pk), "title": "Forged", "url": "x"})
    assert decision.minutes_ref == {
        "id": str(minutes.pk),
        "title": "Steerco 3",
        "url": "https://wiki.example/3",
        "pageId": "42",
    }
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, minutesRef={"id": str(foreign.pk)})
    assert refused(excinfo) == {"minutesRef"}
    assert update(cast, decision, minutesRef=None).minutes_ref is None


def test_evidence_links_http_or_https_keep_their_ids(cast):
    page = LocalWikiPage.objects.create(space_key="GOV", title="Board paper")
    page_id = str(page.pk)
    decision = create(
        cast,
        evidenceLinks=[
            {
                "label": "Paper",
                "url": "https://wiki.example/paper",
                "type": "confluence",
                "pageId": page_id,
            },
            "http://plain.example",
        ],
    )
    links = decision.evidence_links
    assert [link["type"] for link in links] == ["confluence", "link"]
    assert links[1]["label"] == "http://plain.example" and links[0]["pageId"] == page_id
    # An edit that sends only label and url (as the inline form does) keeps the wiki link.
    again = update(
        cast, decision, evidenceLinks=[{"label": "Paper v2", "url": "https://wiki.example/paper"}]
    )
    kept = again.evidence_links[0]
    assert (kept["id"], kept["type"], kept["pageId"], kept["label"]) == (
        links[0]["id"],
        "confluence",
        page_id,
        "Paper v2",
    )
    with pytest.raises(ValidationFailed) as excinfo:
        create(
            cast,
            evidenceLinks=[
                {"url": "https://w.example/x", "type": "confluence", "pageId": "999999"}
            ],
        )
    assert refused(excinfo) == {"evidenceLinks[0].pageId"}
    with pytest.raises(ValidationFailed) as excinfo:
        create(
            cast,
            evidenceLinks=[{"url": "https://w.example/x", "type": "link", "templateKind": "bogus"}],
        )
    assert refused(excinfo) == {"evidenceLinks[0].templateKind"}
    for bad in ("javascript:alert(1)", "mailto:x@example.com", "https://"):
        with pytest.raises(ValidationFailed) as excinfo:
            create(cast, evidenceLinks=[{"url": bad}])
        assert refused(excinfo) == {"evidenceLinks[0].url"}


def test_log_lists_newest_first(cast):
    first = create(cast, decision="First")
    second = create(cast, decision="Second")
    assert [d.pk for d in selectors.decisions(cast.project)] == [second.pk, first.pk]


def test_imported_decision_without_made_on_is_dated_today(cast):
    decision = decision_create(caller=lead(cast), data={"decision": "Old one"}, imported=True)
    assert decision.imported is True and decision.made_on == timezone.localdate()


def test_frozen_registers_refuse_writes_but_accept_notes(cast):
    decision = create(cast)
    cast.project.approval_status = "Closed"
    cast.project.save()
    with pytest.raises(Frozen):
        create(cast, decision="x")
    with pytest.raises(Frozen):
        update(cast, decision, rationale="x")
    noted = decision_append_note(caller=lead(cast), decision_id=decision.pk, text_value="After")
    assert noted.notes[0]["text"] == "After"


def test_stale_revision_is_refused(cast):
    decision = create(cast)
    decision_update(
        caller=lead(cast), decision_id=decision.pk, data={"rationale": "a"}, expected_revision=1
    )
    with pytest.raises(Stale):
        decision_update(
            caller=lead(cast), decision_id=decision.pk, data={"rationale": "b"}, expected_revision=1
        )
    with pytest.raises(Stale):
        decision_append_note(
            caller=lead(cast), decision_id=decision.pk, text_value="x", expected_revision=1
        )
