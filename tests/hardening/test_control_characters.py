"""NUL and the other C0 control characters (but tab and line breaks) are refused with a 422
naming the field, wherever text comes in: JSON bodies, query parameters, CSV import, HTML
forms. (PostgreSQL cannot store NUL in text; before, each of these answered 500 there.)"""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance import cleaning
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import WorkPackageFactory

BASE = "/api/v1/projects/ALPHA"
NUL = "a\u0000b"

BODIES = [
    ("POST", "/work-packages", {"name": NUL}, "name"),
    ("POST", "/work-packages", {"name": "Build", "commentary": NUL}, "commentary"),
    ("POST", "/risks", {"title": NUL}, "title"),
    ("POST", "/risks", {"title": "Vendor", "description": "x\u0007y"}, "description"),
    ("POST", "/risks", {"title": "Vendor", "mitigation": NUL}, "mitigation"),
    ("POST", "/decisions", {"decision": NUL}, "decision"),
    ("POST", "/decisions", {"decision": "Go", "rationale": NUL}, "rationale"),
    ("POST", "/changes", {"summary": NUL}, "summary"),
    ("POST", "/changes", {"summary": "More", "reason": NUL}, "reason"),
    ("PATCH", "/charter", {"businessProblem": NUL}, "businessProblem"),
    ("PATCH", "/charter", {"outcome": "x\u001by"}, "outcome"),
    ("PATCH", "/status", {"phase": NUL}, "phase"),
    ("PATCH", "/status", {"costRagOverrideReason": NUL}, "costRagOverrideReason"),
    ("PATCH", "/status", {"structuredCommentary": {"risks": NUL}}, "structuredCommentary.risks"),
    ("POST", "/status/reports", {"title": NUL}, "title"),
    ("POST", "/status/reports", {"title": "May", "keyMessages": NUL}, "keyMessages"),
    ("PUT", "/editors", {"accountIds": [NUL]}, "accountIds[0]"),
    ("POST", "/minutes", {"title": NUL, "url": "https://example.com/m"}, "title"),
]


@pytest.fixture
def lead(cast, bearer):
    client = Client()
    auth = bearer(cast.lead)

    def send(method, path, body=None, **extra):
        if method == "GET":
            return client.get(BASE + path, **auth, **extra)
        return client.generic(
            method, BASE + path, json.dumps(body), content_type="application/json", **auth
        )

    return send


def _named(response, field):
    assert response.status_code == 422, response.content
    body = response.json()["error"]
    assert body["code"] == "validation"
    assert body["fields"][field] == [cleaning.CONTROL_MESSAGE], body
    return body


@pytest.mark.parametrize(("method", "path", "body", "field"), BODIES)
def test_a_control_character_in_a_json_body_is_a_422_naming_the_field(
    lead, method, path, body, field
):
    _named(lead(method, path, body), field)
    assert not WorkPackage.objects.exists() and not Risk.objects.exists()
    assert not Decision.objects.exists() and not ChangeRequest.objects.exists()


def test_tabs_and_line_breaks_are_kept(lead):
    response = lead("POST", "/risks", {"title": "Vendor", "description": "one\r\n\ttwo\nthree"})
    assert response.status_code == 201, response.content
    assert Risk.objects.get().description == "one\r\n\ttwo\nthree"


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/audit?kind=a%00b", "kind"),
        ("/audit?actorAccountId=%00", "actorAccountId"),
        ("/status/reports?state=%01", "state"),
        ("/risks/export?format=cs%00v", "format"),
    ],
)
def test_a_control_character_in_a_query_parameter_is_a_422(lead, path, field):
    _named(lead("GET", path), field)


def test_portfolio_and_lessons_query_parameters(cast, bearer):
    client = Client()
    auth = bearer(cast.site_admin)
    _named(client.get("/api/v1/portfolio?theme=%00", **auth), "theme")
    _named(client.get("/api/v1/portfolio/lessons?q=x%00", **auth), "q")


def test_a_control_character_in_a_path_is_not_found(lead, cast, client_for):
    assert lead("GET", "/../A%00/risks").status_code == 404
    response = Client().get("/api/v1/projects/AL%00PHA", **{})
    assert response.status_code in (401, 404)
    assert client_for(cast.lead).get("/projects/AL%00PHA/").status_code == 404


def test_csv_import_names_the_row_and_field(cast, bearer):
    content = b"title,description\nVendor,fine\nSupplier,bad\x00cell\n"
    response = Client().post(
        BASE + "/risks/import",
        {"file": SimpleUploadedFile("r.csv", content)},
        **bearer(cast.lead),
    )
    assert response.status_code == 422, response.content
    rows = response.json()["error"]["rows"]
    assert rows == [{"row": 3, "field": "description", "message": cleaning.CONTROL_MESSAGE}]
    assert not Risk.objects.exists()


def test_html_forms_and_query_parameters_answer_422_naming_the_field(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    client = client_for(cast.lead)
    page = client.post(f"/projects/ALPHA/registers/work-packages/{wp.pk}/", {"name": NUL})
    assert page.status_code == 422
    assert "<strong>Name</strong>" in page.content.decode()
    inline = client.post(
        f"/projects/ALPHA/registers/work-packages/{wp.pk}/",
        {"name": NUL, "revision": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert inline.status_code == 422 and inline["HX-Reswap"] == "none"
    assert "name: Must not contain" in json.loads(inline["HX-Trigger"])["flash"]["message"]
    wp.refresh_from_db()
    assert wp.name == "Build"
    search = client.get("/projects/ALPHA/registers/work-packages/?q=%00")
    assert search.status_code == 422 and "<strong>Search</strong>" in search.content.decode()
    assert client.get("/projects/ALPHA/audit/?kind=%00").status_code == 422


@pytest.mark.parametrize(
    "value", ["\x00", "a\x01", "\x08", "\x0b", "\x0c", "\x0e", "\x1f", "x\x1bz"]
)
def test_the_text_cleaner_refuses_c0_controls(value):
    assert cleaning.text(value, max_length=100)[1] == cleaning.CONTROL_MESSAGE
    assert cleaning.account_id(value)[1] == cleaning.CONTROL_MESSAGE


@pytest.mark.parametrize("value", ["tab\there", "line\nbreak", "crlf\r\nend", "é ü — 😀"])
def test_the_text_cleaner_keeps_tabs_line_breaks_and_unicode(value):
    assert cleaning.text(value, max_length=100) == (value.strip(), None)
