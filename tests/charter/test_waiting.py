"""Waiting for me: across every project a person can view, the business cases and change
requests awaiting their decision, in a constant number of queries."""

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from charter.models import BusinessCase
from charter.services import sync_mirror
from gates.models import GateReview, Stage
from status.models import ProjectException
from tests.charter.conftest import closeout_record, complete_inputs, seat
from tests.factories import ChangeRequestFactory, ProjectFactory

URL = "/waiting/"


def make_project(key, cast, status, **fields):
    project = ProjectFactory(
        key=key,
        name=f"Project {key}",
        lead=cast.lead,
        browsers=[cast.editor, cast.viewer, cast.sponsor],
    )
    case = BusinessCase.objects.create(
        project=project, approval_status=status, **{**complete_inputs(cast), **fields}
    )
    sync_mirror(project, case)
    return project


def test_the_sponsor_sees_the_cases_and_changes_awaiting_them(cast, client_for):
    make_project("SUB", cast, "Submitted")
    make_project("CLO", cast, "ClosingSubmitted", close_out=closeout_record())
    make_project("REA", cast, "InRealisation")
    make_project("APP", cast, "Approved")  # nothing awaits the sponsor here
    elsewhere = make_project(
        "ELS", cast, "Submitted", decision_authority=seat(cast.viewer)
    )  # another sponsor
    mine = ChangeRequestFactory(project=elsewhere, summary="Mine by name",
                                approver_account_id=cast.sponsor.account_id)  # fmt: skip
    sponsored = make_project("SPO", cast, "Approved")
    ChangeRequestFactory(project=sponsored, summary="Sponsor decides")  # no approver named
    ChangeRequestFactory(project=sponsored, summary="Named to someone else",
                         approver_account_id=cast.viewer.account_id)  # fmt: skip
    ChangeRequestFactory(project=sponsored, summary="Already decided", status="Approved")
    hidden = ProjectFactory(key="HID", lead=cast.outsider)  # the sponsor cannot browse it
    ChangeRequestFactory(project=hidden, summary="Hidden",
                         approver_account_id=cast.sponsor.account_id)  # fmt: skip
    html = client_for(cast.sponsor).get(URL).content.decode()
    assert "Approve or return the business case" in html
    assert "Close or return the close-out" in html
    assert "Record the realisation verdict" in html
    assert html.count('href="/projects/SUB/charter/"') == 1
    assert "/projects/ELS/charter/" not in html and "/projects/APP/" not in html
    assert "Mine by name" in html and "Sponsor decides" in html
    assert "Named to someone else" not in html and "Already decided" not in html
    assert "Hidden" not in html
    assert mine.summary in html


def test_the_bau_owner_sees_the_handover(cast, client_for):
    make_project("BAU", cast, "Closed", close_out=closeout_record(owner=cast.viewer))
    html = client_for(cast.viewer).get(URL).content.decode()
    assert "Acknowledge the BAU handover" in html
    assert "No change request awaits your decision" in html


def test_nothing_waiting_says_so(cast, client_for):
    html = client_for(cast.lead).get(URL).content.decode()
    assert "No business case awaits your decision" in html
    assert 'aria-current="page">Waiting for me' in html


@pytest.mark.parametrize("sizes", [(1, 12)])
def test_constant_queries_whatever_the_number_of_projects(sizes, cast, client_for):
    client = client_for(cast.sponsor)

    def add(n, start):
        for index in range(start, start + n):
            project = make_project(f"W{index:03d}", cast, "Submitted")
            ChangeRequestFactory(project=project, summary=f"Change {index}")

    def count():
        with CaptureQueriesContext(connection) as queries:
            response = client.get(URL)
        assert response.status_code == 200
        return len(queries), response.content.decode().count("Approve or return")

    small, large = sizes
    add(small, 0)
    client.get(URL)  # warm the people cache for the proposer
    at_small, shown = count()
    assert shown == small
    add(large - small, small)
    at_large, shown = count()
    assert shown == large
    assert at_large == at_small, (at_small, at_large)


def test_only_the_projects_where_something_may_await_are_read(cast, client_for, callers_read):
    """The queue reads the callers of the viewable projects where a case, a change, a gate
    review or an exception may await the person (each app's condition), not of every project
    they can view; what each of those holds is still listed."""
    make_project("SUB", cast, "Submitted")
    make_project("QUI", cast, "Approved")  # nothing here
    excepted = make_project("EXC", cast, "Approved")
    ProjectException.objects.create(project=excepted, opened_at=timezone.now())
    gated = make_project("GAT", cast, "Approved")
    stage = Stage.objects.create(project=gated, position=1, name="Initiation", state="Current")
    GateReview.objects.create(
        stage=stage, requested_at=timezone.now(), requested_by_account_id="someone"
    )
    hidden = ProjectFactory(key="HID", lead=cast.outsider)  # not browsable by the sponsor
    ProjectException.objects.create(project=hidden, opened_at=timezone.now())
    html = client_for(cast.sponsor).get(URL).content.decode()
    assert sorted(callers_read) == ["EXC", "GAT", "SUB"]
    assert "Approve or return the business case" in html
    assert "The gate review of the Initiation stage awaits your decision." in html
    assert "the Project Lead has not reported yet" in html
    assert "HID" not in html


def test_a_change_routed_by_seat_and_a_held_gate_reach_their_people(cast, client_for):
    """The approver named by a seat (not by account) finds the change; after a Hold's date the
    lead finds the gate to request again (the gates' condition names the project for anyone)."""
    routed = make_project("SEA", cast, "Approved")
    ChangeRequestFactory(project=routed, summary="Seated approver", approver_seat=seat(cast.viewer))
    held = make_project("HLD", cast, "Approved")
    stage = Stage.objects.create(project=held, position=1, name="Design", state="Current")
    GateReview.objects.create(
        stage=stage,
        state="Decided",
        outcome="Hold",
        hold_until=timezone.localdate() - dt.timedelta(days=1),
        requested_at=timezone.now() - dt.timedelta(days=3),
        requested_by_account_id=cast.lead.account_id,
        decided_at=timezone.now() - dt.timedelta(days=2),
        decided_by_account_id=cast.sponsor.account_id,
    )
    assert "Seated approver" in client_for(cast.viewer).get(URL).content.decode()
    html = client_for(cast.lead).get(URL).content.decode()
    assert "The sponsor held the Design gate until" in html
    assert "Seated approver" not in html
