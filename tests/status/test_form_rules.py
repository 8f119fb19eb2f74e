"""The status form applies what a person types with the API's limits, and refuses, next to
the field, what the page cannot read or an override without its commentary line."""

import re

from status.models import ProjectStatus

EDIT = "/projects/ALPHA/status/edit/"
HX = {"HTTP_HX_REQUEST": "true"}


def field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="field-error" id="e-{field}">(.*?)</p>', html)
    return match.group(1) if match else ""


def test_an_override_without_a_reason_is_refused_next_to_its_field(cast, client_for):
    response = client_for(cast.lead).post(
        EDIT,
        {"revision": "1", "overallRag": "Green", "costRagOverride": "Red",
         "costRagOverrideReason": "  ", "scheduleRagOverride": "", "scheduleRagOverrideReason": ""},
        **HX,
    )  # fmt: skip
    assert response.status_code == 422
    html = response.content.decode()
    assert "why the cost RAG is overridden" in field_error(html, "costRagOverrideReason")
    assert 'id="f-costRagOverrideReason"' in html and 'aria-invalid="true"' in html
    assert field_error(html, "scheduleRagOverrideReason") == ""
    assert not ProjectStatus.objects.exists()


def test_an_override_with_its_reason_saves(cast, client_for):
    response = client_for(cast.lead).post(
        EDIT,
        {"revision": "1", "costRagOverride": "Red", "costRagOverrideReason": "Vendor invoice due"},
        **HX,
    )
    assert response.status_code == 200
    status = ProjectStatus.objects.get()
    assert (status.cost_rag_override, status.cost_rag_override_reason) == (
        "Red",
        "Vendor invoice due",
    )


def test_a_forecast_the_page_cannot_read_is_refused(cast, client_for):
    for typed, message in (("12k", "Write a number"), ("-5000", "Must not be negative")):
        response = client_for(cast.lead).post(
            EDIT, {"revision": "1", "revisedForecast": typed}, **HX
        )
        assert response.status_code == 422
        html = response.content.decode()
        assert message in field_error(html, "revisedForecast")
        assert f'value="{typed}"' in html
    assert not ProjectStatus.objects.exists()
    response = client_for(cast.lead).post(
        EDIT, {"revision": "1", "revisedForecast": "1,250,000"}, **HX
    )
    assert response.status_code == 200
    assert ProjectStatus.objects.get().revised_forecast == 1250000


def test_phase_keeps_the_api_limit_and_wraps_in_its_card(cast, client_for):
    response = client_for(cast.lead).post(EDIT, {"revision": "1", "phase": "p" * 201}, **HX)
    assert response.status_code == 422
    assert "At most 200 characters" in field_error(response.content.decode(), "phase")
    client_for(cast.lead).post(EDIT, {"revision": "1", "phase": "p" * 200}, **HX)
    html = client_for(cast.lead).get("/projects/ALPHA/status/").content.decode()
    assert '<dd class="wrap">' + "p" * 200 in html
