"""Waiting for me as a work queue: only what the person can decide now, with its impact and
age; what still needs them but cannot be decided now says why and what to do; a change is
approved or rejected from its row (the change register's service), back to the queue with a
notice; notifications resolve when their act is done and the bell counts only open ones."""

import datetime as dt
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.utils import timezone

from charter.services import charter_approve, charter_return, charter_submit
from governance import notifications
from governance.models import AuditEntry, Notification
from registers.models import ChangeRequest
from registers.services import change_create
from status import resolved
from tests.charter.test_waiting import make_project
from tests.factories import ChangeRequestFactory

URL = "/waiting/"
HTMX = {"HTTP_HX_REQUEST": "true"}


def decide_url(change) -> str:
    return f"/waiting/changes/{change.project.key}/{change.pk}/decide/"


@pytest.fixture
def queue(cast):
    """OPEN (Approved: its change decidable), FRZ (Closed: frozen registers), and a change
    the sponsor proposed themselves (separation of duties)."""
    open_project = make_project("OPEN", cast, "Approved")
    frozen = make_project("FRZ", cast, "Closed")
    decidable = ChangeRequestFactory(
        project=open_project,
        summary="Add a second team",
        impact_budget=Decimal("12000"),
        impact_schedule_days=14,
        dimensions=["Budget", "Schedule"],
        revision=1,
    )
    stuck = ChangeRequestFactory(project=frozen, summary="Late scope tweak", impact_schedule_days=5)
    own = ChangeRequestFactory(
        project=open_project,
        summary="My own idea",
        proposer_account_id=cast.sponsor.account_id,
    )
    return decidable, stuck, own


def test_the_queue_lists_what_can_be_decided_now_and_says_why_for_the_rest(cast, client_for, queue):
    decidable, stuck, own = queue
    html = client_for(cast.sponsor).get(URL).content.decode()
    assert decide_url(decidable) in html
    # The frozen project's change and the sponsor's own are not decidable: no Approve, a reason.
    assert decide_url(stuck) not in html and decide_url(own) not in html
    held = html[html.index('id="held-h"') :]
    assert "Late scope tweak" in held and "My own idea" in held
    assert "The business case is Closed, so the registers of FRZ are frozen" in held
    assert "Nothing is asked of you" in held
    assert "You proposed this change, so you may not decide it" in held
    assert "Ask an editor of the project to name another approver" in held


def test_each_row_shows_its_impact_and_age(cast, client_for, queue):
    html = client_for(cast.sponsor).get(URL).content.decode()
    row = html[html.index('id="change-') :]
    row = row[: row.index("</li>")]
    assert "EUR\u00a0+12,000, +14 days" in row and "(Budget, Schedule)" in row
    assert 'class="age">today<' in row


def test_the_queue_belongs_to_its_person(cast, client_for, queue):
    html = client_for(cast.lead).get(URL).content.decode()
    assert "No change request awaits your decision" in html
    assert "Add a second team" not in html
    html = client_for(cast.viewer).get(URL).content.decode()
    assert "Add a second team" not in html and "held-h" not in html


def test_approve_from_the_row_returns_to_the_queue_with_a_message(cast, client_for, queue):
    decidable, _, _ = queue
    client = client_for(cast.sponsor)
    response = client.post(decide_url(decidable), {"outcome": "Approved", "revision": "1"})
    assert response.status_code == 302 and response["Location"] == URL
    decidable.refresh_from_db()
    assert decidable.status == "Approved" and decidable.decided_by_account_id
    assert AuditEntry.objects.filter(kind="change.approved", target_id=str(decidable.pk)).exists()
    html = client.get(URL).content.decode()
    assert "OPEN: change request “Add a second team” approved." in html
    assert decide_url(decidable) not in html


def test_htmx_approve_answers_the_queue_and_the_notice(cast, client_for, queue):
    decidable, _, _ = queue
    response = client_for(cast.sponsor).post(
        decide_url(decidable), {"outcome": "Approved", "revision": "1"}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('id="queue"') == 1 and "<html" not in html
    assert 'hx-swap-oob="true"' in html and "“Add a second team” approved." in html
    assert 'id="queue-h" tabindex="-1" data-focus' in html


def test_reject_without_a_reason_is_refused_on_the_row(cast, client_for, queue):
    decidable, _, _ = queue
    response = client_for(cast.sponsor).post(
        decide_url(decidable), {"outcome": "Rejected", "decisionComment": "  "}, **HTMX
    )
    html = response.content.decode()
    assert response.status_code == 422
    assert "A reason is required to reject a change." in html
    assert 'aria-invalid="true"' in html and '<details class="queue-reject" open>' in html
    decidable.refresh_from_db()
    assert decidable.status == "Proposed"


def test_a_refused_reason_keeps_what_was_typed(cast, client_for, queue):
    decidable, _, _ = queue
    typed = "Too dear " + "x" * 2000
    response = client_for(cast.sponsor).post(
        decide_url(decidable), {"outcome": "Rejected", "decisionComment": typed}
    )
    html = response.content.decode()
    assert response.status_code == 422  # without script: the whole page, the row refused
    assert typed in html and "<html" in html


def test_reject_with_a_reason_from_the_row(cast, client_for, queue):
    decidable, _, _ = queue
    response = client_for(cast.sponsor).post(
        decide_url(decidable),
        {"outcome": "Rejected", "decisionComment": "Not this quarter", "revision": "1"},
        follow=True,
    )
    assert "“Add a second team” rejected." in response.content.decode()
    decidable.refresh_from_db()
    assert decidable.status == "Rejected" and decidable.decision_comment == "Not this quarter"


def test_a_frozen_change_posted_anyway_is_refused_with_the_reason(cast, client_for, queue):
    _, stuck, _ = queue
    response = client_for(cast.sponsor).post(decide_url(stuck), {"outcome": "Approved"}, **HTMX)
    assert response.status_code == 409
    assert "frozen" in response.content.decode()
    stuck.refresh_from_db()
    assert stuck.status == "Proposed"


def test_only_the_decider_decides_from_the_queue(cast, client_for, queue):
    decidable, _, _ = queue
    response = client_for(cast.viewer).post(decide_url(decidable), {"outcome": "Approved"})
    assert response.status_code == 403
    response = client_for(cast.outsider).post(decide_url(decidable), {"outcome": "Approved"})
    assert response.status_code == 404
    response = client_for(cast.sponsor).post(decide_url(decidable), {"outcome": "Withdrawn"})
    assert response.status_code in (403, 422)
    decidable.refresh_from_db()
    assert decidable.status == "Proposed"


# --- notifications resolve when their act is done ---------------------------------------------


def unread(user) -> int:
    return notifications.unread_count(user.account_id)


def test_a_decided_change_resolves_its_notification(cast, client_for, as_, arrange):
    arrange("Approved")
    change = change_create(caller=as_(cast.editor), data={"summary": "Extra tests"})
    assert unread(cast.sponsor) == 1
    client = client_for(cast.sponsor)
    assert 'class="count-badge">1<' in client.get(URL).content.decode()
    client.post(decide_url(change), {"outcome": "Approved"})
    assert unread(cast.sponsor) == 0
    note = Notification.objects.get(kind="change_routed")
    assert note.read_at is not None
    assert "count-badge" not in client.get(URL).content.decode()


def test_a_change_routed_elsewhere_resolves_the_former_deciders_notice(cast, as_, arrange):
    from registers.services import change_update

    arrange("Approved")
    change = change_create(caller=as_(cast.editor), data={"summary": "Extra tests"})
    assert unread(cast.sponsor) == 1
    change_update(
        caller=as_(cast.lead),
        change_id=change.pk,
        data={"approverAccountId": cast.pmo.account_id},
        expected_revision=change.revision,
    )
    assert unread(cast.sponsor) == 0
    assert unread(cast.pmo) == 1


def test_a_decided_case_resolves_its_submission_notice(cast, as_, arrange):
    arrange("Draft")
    charter_submit(caller=as_(cast.editor))
    assert unread(cast.sponsor) == 1
    charter_return(
        caller=as_(cast.sponsor),
        data={"returnNotes": [{"section": "general", "ask": "More", "severity": "Minor"}]},
    )
    assert unread(cast.sponsor) == 0
    charter_submit(caller=as_(cast.editor))
    assert unread(cast.sponsor) == 1  # submitted again: a new, open notice
    charter_approve(caller=as_(cast.sponsor), data={})
    assert unread(cast.sponsor) == 0


def test_freezing_the_registers_resolves_the_routed_changes(cast, as_, arrange):
    from charter.serializers import stored_fields
    from charter.services.common import Write

    case = arrange("Approved")
    change_create(caller=as_(cast.editor), data={"summary": "Late idea"})
    assert unread(cast.sponsor) == 1
    write = Write(caller=as_(cast.editor), project=cast.project, case=case,
                  before=stored_fields(case))  # fmt: skip
    case.approval_status = "ClosingSubmitted"
    write.finish("charter.close_out_submitted")
    assert unread(cast.sponsor) == 0


def test_the_sweep_resolves_stale_notifications(cast, as_, arrange):
    arrange("Approved")
    live = change_create(caller=as_(cast.editor), data={"summary": "Still open"})
    gone = change_create(caller=as_(cast.editor), data={"summary": "Decided long ago"})
    # Decided behind the services' back (as older data was): its notice stayed unread.
    ChangeRequest.objects.filter(pk=gone.pk).update(status="Approved")
    Notification.objects.create(
        recipient_account_id=cast.sponsor.account_id,
        kind="case_submitted",
        dedupe_key="case_submitted:ALPHA:2020-01-01T00:00:00+00:00",
        subject="ALPHA: business case submitted for your approval",
    )
    assert unread(cast.sponsor) == 3
    assert sorted(resolved.stale_ids()) == sorted(
        Notification.objects.exclude(dedupe_key__contains=str(live.pk)).values_list("pk", flat=True)
    )
    call_command("resolve_notifications")
    assert unread(cast.sponsor) == 1
    entry = AuditEntry.objects.get(kind="notifications.resolved")
    assert entry.changes["resolved"]["after"]["count"] == 2
    assert resolved.resolve_done() == 0  # idempotent


# --- resubmitting with an open Blocker return note -------------------------------------------

SUBMIT = "/projects/ALPHA/charter/acts/submit/"
BLOCKER = {
    "section": "returnExpected",
    "ask": "Show the benefit as a figure",
    "severity": "Blocker",
}


def returned_with_a_blocker(cast, as_, arrange):
    arrange("Draft")
    charter_submit(caller=as_(cast.editor))
    charter_return(caller=as_(cast.sponsor), data={"returnNotes": [BLOCKER]})


def test_resubmitting_with_an_open_blocker_warns_naming_it(cast, as_, arrange, client_for):
    from charter.models import BusinessCase

    returned_with_a_blocker(cast, as_, arrange)
    client = client_for(cast.editor)
    page = client.get("/projects/ALPHA/charter/").content.decode()
    assert "A Blocker return note is</strong>" in page.replace(" still open.", "")
    assert "“Show the benefit as a figure”" in page and 'name="confirmBlockers"' in page
    response = client.post(SUBMIT, {"page": "case"})
    html = response.content.decode()
    assert response.status_code == 409
    assert "Blocker return note is still open: “Show the benefit as a figure”" in html
    assert BusinessCase.objects.get(project=cast.project).approval_status == "Draft"
    response = client.post(SUBMIT, {"page": "case", "confirmBlockers": "yes"})
    assert response.status_code == 302
    assert BusinessCase.objects.get(project=cast.project).approval_status == "Submitted"


def test_an_addressed_blocker_needs_no_warning(cast, as_, arrange, client_for):
    from charter.models import BusinessCase
    from charter.services import return_note_address

    returned_with_a_blocker(cast, as_, arrange)
    note = BusinessCase.objects.get(project=cast.project).return_notes[0]
    return_note_address(caller=as_(cast.editor), note_id=note["id"], data={"addressed": True})
    client = client_for(cast.editor)
    assert 'name="confirmBlockers"' not in client.get("/projects/ALPHA/charter/").content.decode()
    assert client.post(SUBMIT, {"page": "case"}).status_code == 302


def test_a_closeout_sent_back_opens_the_routed_changes_again(cast, as_, arrange):
    """Frozen at close-out submission, the routed changes' notices were marked read; sent back,
    the registers thaw and the changes are the sponsor's to decide again: the bell counts them.
    A notice the sponsor read before the freeze stays read."""
    from charter.serializers import stored_fields
    from charter.services import closeout_return
    from charter.services.common import Write

    case = arrange("Approved")
    change_create(caller=as_(cast.editor), data={"summary": "Late idea"})
    seen = change_create(caller=as_(cast.editor), data={"summary": "Seen already"})
    Notification.objects.filter(dedupe_key__contains=str(seen.pk)).update(
        read_at=timezone.now() - dt.timedelta(days=1)
    )
    assert unread(cast.sponsor) == 1
    write = Write(caller=as_(cast.editor), project=cast.project, case=case,
                  before=stored_fields(case))  # fmt: skip
    case.approval_status = "ClosingSubmitted"
    write.finish("closeout.submitted")
    assert unread(cast.sponsor) == 0
    closeout_return(
        caller=as_(cast.sponsor),
        data={"returnNotes": [{"section": "lessons", "ask": "Deeper", "severity": "Minor"}]},
    )
    assert unread(cast.sponsor) == 1
    note = Notification.objects.get(read_at=None)
    assert "Late idea" in note.subject
    assert resolved.stale_ids() == []  # the sweep agrees: it is open
