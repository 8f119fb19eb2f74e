"""Exceptions in "Waiting for me": a reported exception is an item of the sponsor's queue; the
sponsor may ask the lead for more information without deciding (audited, the lead told, shown
on the exception, answered by rewriting the report); a decided exception keeps its cause,
options and the decision with its reason; deciding resolves the exception's notifications."""

import pytest

from governance import notifications
from governance.errors import Conflict, Forbidden, ValidationFailed
from governance.models import AuditEntry, Notification
from status import exceptions
from tests.status.test_exceptions import REPORT, approved, in_exception, wp  # noqa: F401

URL = "/waiting/"
ASK = "/projects/ALPHA/status/exception/ask/"


@pytest.fixture
def reported(cast, as_, in_exception):  # noqa: F811
    return exceptions.exception_report(caller=as_(cast.lead), data=REPORT)


def test_an_open_exception_asks_the_lead_for_a_report(cast, client_for, in_exception):  # noqa: F811
    html = client_for(cast.lead).get(URL).content.decode()
    assert "Write the exception report" in html
    html = client_for(cast.sponsor).get(URL).content.decode()
    assert "the Project Lead has not reported yet" in html
    assert "Read the report and decide" not in html


def test_a_reported_exception_is_an_item_of_the_sponsors_queue(cast, client_for, reported):
    html = client_for(cast.sponsor).get(URL).content.decode()
    section = html[html.index('id="exceptions-h"') :]
    assert "Decide on the exception report" in section
    assert "Read the report and decide" in section and ASK in section
    assert "days added to the schedule" in section
    assert "Decide on the exception report" not in client_for(cast.viewer).get(URL).content.decode()


def test_the_sponsor_asks_the_lead_for_more_without_deciding(cast, as_, reported):
    record = exceptions.exception_ask(
        caller=as_(cast.sponsor), question="Why a month, not two weeks?"
    )
    assert record.state == "Reported" and not record.decision
    asked = exceptions.information_asked(record)
    assert asked["question"] == "Why a month, not two weeks?"
    assert asked["by"] == cast.sponsor.account_id
    assert AuditEntry.objects.filter(kind="exception.asked", target_id=str(record.pk)).exists()
    note = Notification.objects.get(
        recipient_account_id=cast.lead.account_id, subject__contains="asks for more"
    )
    assert note.read_at is None
    # Rewriting the report answers the question: the notice is resolved, the question closed.
    again = exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    assert exceptions.information_asked(again) is None
    note.refresh_from_db()
    assert note.read_at is not None


def test_asking_is_the_sponsors_and_needs_a_question(cast, as_, in_exception):  # noqa: F811
    with pytest.raises(Conflict):  # not reported yet
        exceptions.exception_ask(caller=as_(cast.sponsor), question="Anything?")
    exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    with pytest.raises(Forbidden):
        exceptions.exception_ask(caller=as_(cast.lead), question="Me?")
    with pytest.raises(ValidationFailed):
        exceptions.exception_ask(caller=as_(cast.sponsor), question="   ")
    assert not AuditEntry.objects.filter(kind="exception.asked").exists()


def test_asking_from_the_queue_returns_to_it_and_shows_on_both_sides(cast, client_for, reported):
    sponsor = client_for(cast.sponsor)
    response = sponsor.post(ASK, {"question": "What does the supplier say?", "back": "queue"})
    assert response.status_code == 302 and response["Location"] == URL
    html = sponsor.get(URL).content.decode()
    assert "your question was sent to the Project Lead" in html
    assert "You asked the Project Lead for more information" in html
    lead_queue = client_for(cast.lead).get(URL).content.decode()
    assert "The sponsor asks: What does the supplier say?" in lead_queue
    page = client_for(cast.viewer).get("/projects/ALPHA/status/exception/").content.decode()
    assert "What does the supplier say?" in page


def test_a_refused_question_keeps_what_was_typed(cast, client_for, reported):
    typed = "Why? " + "x" * 2001
    response = client_for(cast.sponsor).post(ASK, {"question": typed})
    assert response.status_code == 422
    assert typed in response.content.decode()
    assert client_for(cast.lead).post(ASK, {"question": "x"}).status_code == 403


def test_a_decided_exception_keeps_its_cause_options_and_reason(cast, as_, client_for, reported):
    assert notifications.unread_count(cast.sponsor.account_id) >= 1
    exceptions.exception_decide(
        caller=as_(cast.sponsor), data={"decision": "AcceptPlan", "comment": "Worth the month."}
    )
    html = client_for(cast.viewer).get("/projects/ALPHA/status/exception/").content.decode()
    past = html[html.index('id="past-h"') :]
    assert REPORT["cause"] in past and "Add a second team" in past
    assert "Worth the month." in past and "Accept" in past
    # Decided: the exception's notices (and the plan's routed change) are resolved.
    assert not Notification.objects.filter(kind="project_exception", read_at=None).exists()
    assert notifications.unread_count(cast.sponsor.account_id) == 0
    assert (
        "Decide on the exception report" not in client_for(cast.sponsor).get(URL).content.decode()
    )


# --- the exception plan's change is decided with the exception, not on its own -----------------


def test_the_plan_change_is_not_decidable_from_the_queue(cast, client_for, reported):
    change = reported.change_request
    client = client_for(cast.sponsor)
    html = client.get(URL).content.decode()
    decide = f"/waiting/changes/ALPHA/{change.pk}/decide/"
    assert decide not in html  # no Approve or Reject on its row
    held = html[html.index('id="held-h"') : html.index('id="exceptions-h"')]
    assert change.summary in held
    assert "exception plan of ALPHA&#x27;s exception report" in held
    assert 'href="/projects/ALPHA/status/exception/"' in held
    # Posted anyway (or through the API): refused, saying where it is decided.
    response = client.post(decide, {"outcome": "Approved"})
    assert response.status_code == 409
    response = client.post(decide, {"outcome": "Rejected", "decisionComment": "No"})
    assert response.status_code == 409
    change.refresh_from_db()
    assert change.status == "Proposed"


def test_the_service_refuses_the_direct_act_and_the_exception_decides_it(cast, as_, reported):
    from registers.services import change_adjudicate

    change = reported.change_request
    with pytest.raises(Conflict) as refused:
        change_adjudicate(caller=as_(cast.sponsor), change_id=change.pk, outcome="Approved")
    assert "accepted or refused with the exception's decision" in str(refused.value)
    with pytest.raises(Conflict):  # nor withdrawn: the decision would find its plan gone
        change_adjudicate(caller=as_(cast.lead), change_id=change.pk, outcome="Withdrawn")
    exceptions.exception_decide(caller=as_(cast.sponsor), data={"decision": "AcceptPlan"})
    change.refresh_from_db()
    assert change.status == "Approved"


def test_the_assistant_lists_what_the_page_lists(cast, client_for, reported):
    """One selector feeds the page and the assistant's waiting_for_me: the held plan change
    with why and where it is decided, and the exception with what it asks."""
    from agent import catalogue
    from governance.tracker.local import scripting
    from tests.agent.conftest import EVERYONE, use_group

    scripting.ensure_group(EVERYONE, members=["lead", "sponsor"])
    use_group(EVERYONE)
    ctx = catalogue.Context(request=catalogue.request_for(cast.sponsor), client="test")
    answer = catalogue.run(ctx, "waiting_for_me", {})
    change = reported.change_request
    assert answer["changes"] == []
    [held] = answer["held"]
    assert held["summary"] == change.summary
    assert "accepted or refused with the exception's decision" in held["whyNotNow"]
    assert held["whatToDo"] == "Decide the exception of ALPHA"
    assert held["decidedAt"].endswith("/projects/ALPHA/status/exception/")
    [item] = answer["exceptions"]
    assert (item["projectKey"], item["act"], item["state"]) == ("ALPHA", "decide", "Reported")
    assert "accept the plan or kill the project" in item["why"]
    html = client_for(cast.sponsor).get(URL).content.decode()
    assert change.summary in html and "Decide on the exception report" in html


def test_the_change_register_offers_no_approve_on_the_plan_change(cast, client_for, reported):
    change = reported.change_request
    html = client_for(cast.sponsor).get(f"/projects/ALPHA/registers/changes/{change.pk}/")
    page = html.content.decode()
    assert 'value="Approved"' not in page and 'value="Rejected"' not in page
    assert "accepted or refused with the exception" in page
    assert 'href="/projects/ALPHA/status/exception/"' in page
