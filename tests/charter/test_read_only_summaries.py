"""Read-only close-out, business case and status pages read as summaries: no form controls,
disabled or not, for someone who cannot write them; the editor still gets the form."""

import re

import pytest

from tests.charter.conftest import closeout_record
from tests.factories import WorkPackageFactory


def controls(html: str) -> list[str]:
    """Every visible form control in the page's main content."""
    main = html.split('<main id="main"', 1)[1]
    found = re.findall(r"<(select|textarea)\b|<input\b(?![^>]*type=\"hidden\")", main)
    return found


@pytest.fixture
def closing(cast, arrange):
    wp = WorkPackageFactory(project=cast.project, name="Build the portal")
    record = closeout_record()
    record["asBuiltOutcome"] = "Portal live for all customers."
    record["scopeDispositions"] = {
        str(wp.pk): {"disposition": "DeliveredAsChartered", "note": "On time"}
    }
    record["lessons"] = {"worked": "Weekly demos.", "differently": "", "nextSponsor": ""}
    return arrange("ClosingSubmitted", close_out=record)


def test_submitted_closeout_reads_as_a_summary(cast, closing, client_for):
    for user in (cast.viewer, cast.lead):  # the lead too: submitted, it is no longer theirs
        response = client_for(user).get("/projects/ALPHA/charter/closeout/")
        assert response.status_code == 200
        html = response.content.decode()
        section = html.split('id="closeout-form"', 1)[1].split("</section>", 1)[0]
        assert "disabled" not in section
        assert not re.search(r"<(select|textarea|input)\b", section)
        assert "Portal live for all customers." in section
        assert "Build the portal" in section and "On time" in section
        assert "Weekly demos." in section


def test_open_closeout_is_still_a_form_for_its_editor(cast, arrange, client_for):
    arrange("Approved", close_out=closeout_record())
    html = client_for(cast.lead).get("/projects/ALPHA/charter/closeout/").content.decode()
    section = html.split('id="closeout-form"', 1)[1].split("</section>", 1)[0]
    assert 'name="asBuiltOutcome"' in section and "Save close-out" in section


@pytest.mark.parametrize("path", ["/projects/ALPHA/charter/", "/projects/ALPHA/status/"])
def test_business_case_and_status_read_as_summaries_for_a_viewer(cast, arrange, client_for, path):
    arrange("Submitted")
    html = client_for(cast.viewer).get(path).content.decode()
    assert controls(html) == []
    assert " disabled" not in html.split('<main id="main"', 1)[1]
