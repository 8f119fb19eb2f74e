"""People read words, not codes: lifecycle states, close-out choices, change states and field
names in error messages get labels on the pages; the API keeps its codes."""

import pytest

from charter.models import BusinessCase
from charter.services import sync_mirror
from governance.labels import field_label, in_message, label
from tests.charter.conftest import closeout_record, complete_inputs
from tests.factories import RiskFactory, WorkPackageFactory


@pytest.mark.parametrize(
    "code,words",
    [
        ("ClosingSubmitted", "Close-out submitted"),
        ("InRealisation", "In realisation"),
        ("NotRealised", "Not realised"),
        ("DeliveredAsChartered", "Delivered as chartered"),
        ("TransferredToBau", "Transferred to BAU"),
        ("AwaitingApplication", "Awaiting application"),
        ("plannedStartDate", "Planned start date"),
        ("ownerAccountId", "Owner"),
        ("Approved", "Approved"),
    ],
)
def test_codes_read_as_words(code, words):
    assert label(code) == words


def test_field_paths_and_messages_read_as_words():
    assert field_label("lines[2].cost") == "Lines, line 3, cost"
    assert field_label("lessons.nextSponsor") == "Lessons, next sponsor"
    assert in_message("Must not be before plannedStartDate (2026-01-01).") == (
        "Must not be before planned start date (2026-01-01)."
    )


def test_state_badges_and_close_out_choices_are_labelled(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Build")
    RiskFactory(project=cast.project, title="Vendor")
    case = BusinessCase.objects.create(
        project=cast.project,
        **{**complete_inputs(cast), "approval_status": "ClosingSubmitted"},
        close_out=closeout_record(),
    )
    sync_mirror(cast.project, case)
    client = client_for(cast.lead)
    for path in ("/", "/projects/ALPHA/", "/projects/ALPHA/charter/closeout/"):
        html = client.get(path).content.decode()
        assert "Close-out submitted" in html, path
        assert ">ClosingSubmitted<" not in html, path
    # Submitted, the close-out reads as a summary; open again, its form offers the choices
    # by their labels.
    BusinessCase.objects.filter(pk=case.pk).update(approval_status="Approved")
    case.refresh_from_db()
    sync_mirror(cast.project, case)
    html = client.get("/projects/ALPHA/charter/closeout/").content.decode()
    assert '<option value="DeliveredAsChartered"' in html
    assert ">Delivered as chartered</option>" in html
    assert ">Transferred to BAU</option>" in html
    assert ">DeliveredAsChartered<" not in html and ">TransferredToBau<" not in html
    api = client.get("/api/v1/projects/ALPHA/charter").json()
    assert api["approvalStatus"] == "Approved"


def test_register_errors_name_fields_in_words(cast, client_for):
    response = client_for(cast.lead).post(
        "/projects/ALPHA/registers/work-packages/",
        {"name": "Build", "status": "Not Started", "plannedStartDate": "2026-03-01",
         "plannedEndDate": "2026-02-01"},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert response.status_code == 422
    html = response.content.decode()
    assert "Must not be before planned start date" in html
    assert "plannedStartDate (" not in html


def test_change_application_filter_is_labelled(cast, client_for):
    html = client_for(cast.viewer).get("/projects/ALPHA/registers/changes/").content.decode()
    assert '<option value="AwaitingApplication">Awaiting application</option>' in html
