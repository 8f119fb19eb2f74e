"""Unicode's 66 noncharacters (U+FDD0..U+FDEF and U+nFFFE, U+nFFFF of every plane) are refused
wherever text comes in (JSON bodies, page forms and query parameters, the assistant's actions,
CSV and XLSX imports), with a 422 naming the field, nothing written. A workbook holding U+FFFE
is corrupt (Excel and openpyxl refuse it): one stored before the rule (written straight into
the database here) is replaced by U+FFFD in every CSV and XLSX export, which still loads and
imports back."""

import io
import json

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from mcp import Client as McpClient
from openpyxl import Workbook

from agent import catalogue
from agent.mcp_server import build_server
from charter.models import BusinessCase
from governance import cleaning
from governance.models import AuditEntry, SiteSettings
from governance.tracker.local import scripting
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status import health
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import run_async
from tests.factories import ProjectFactory, WorkPackageFactory

BASE = "/api/v1/projects/ALPHA"
EVERY = cleaning.NONCHARACTER_LIST
# One of each kind: the first and last of the U+FDD0 block, and both of every plane.
PLANES = [chr(plane * 0x10000 + low) for plane in range(17) for low in (0xFFFE, 0xFFFF)]
SAMPLE = ["\ufdd0", "\ufdef", *PLANES]
MESSAGE = cleaning.NONCHARACTER_MESSAGE


def test_the_list_is_unicodes_66_noncharacters():
    assert len(EVERY) == len(set(EVERY)) == 66
    assert {c for c in map(chr, range(0x110000)) if _is_noncharacter(c)} == set(EVERY)


def _is_noncharacter(c: str) -> bool:
    point = ord(c)
    return 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE


@pytest.mark.parametrize("character", EVERY, ids=[f"U+{ord(c):04X}" for c in EVERY])
def test_every_cleaner_refuses_each_noncharacter(character):
    text = f"Cost{character}Out"
    assert cleaning.text(text, max_length=100) == ("", MESSAGE)
    assert cleaning.optional_text(text, max_length=100)[1] == MESSAGE
    assert cleaning.account_id(text)[1] == MESSAGE
    assert cleaning.http_url(f"https://example.com/{character}")[1] == MESSAGE
    assert cleaning.project_key(text)[1] == MESSAGE
    assert cleaning.refusals({"a": [{"b": text}]}) == {"a[0].b": MESSAGE}
    assert cleaning.control_error(text) == MESSAGE
    assert cleaning.file_text(text) == "Cost\ufffdOut"


@pytest.mark.parametrize("neighbour", ["\ufdcf", "\ufdf0", "\ufffd", "\U0001fffd", "\U00020000"])
def test_the_characters_beside_them_are_kept(neighbour):
    assert cleaning.text(f"a{neighbour}", max_length=10) == (f"a{neighbour}", None)


@pytest.fixture
def lead(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def send(method, path, body):
        data = json.dumps(body)  # \ufffe and the astral ones as JSON escapes, as clients send
        return client.generic(method, BASE + path, data, content_type="application/json", **auth)

    return send


BODIES = [
    ("POST", "/work-packages", lambda v: {"name": v}, "name"),
    ("POST", "/work-packages", lambda v: {"name": "Build", "commentary": v}, "commentary"),
    ("POST", "/risks", lambda v: {"title": v}, "title"),
    ("POST", "/decisions", lambda v: {"decision": v}, "decision"),
    ("POST", "/changes", lambda v: {"summary": v}, "summary"),
    ("PATCH", "/charter", lambda v: {"businessProblem": v}, "businessProblem"),
    ("PATCH", "/status", lambda v: {"phase": v}, "phase"),
    ("PATCH", "/status", lambda v: {"projectMetrics": {"k": v}}, "projectMetrics.k"),
    ("POST", "/status/reports", lambda v: {"title": v}, "title"),
    ("PUT", "/editors", lambda v: {"accountIds": [v]}, "accountIds[0]"),
    ("POST", "/minutes", lambda v: {"title": v, "url": "https://example.com/m"}, "title"),
]


def _stored():
    return (
        WorkPackage.objects.count(),
        Risk.objects.count(),
        Decision.objects.count(),
        ChangeRequest.objects.count(),
        AuditEntry.objects.count(),
    )


@pytest.mark.parametrize(("method", "path", "body", "field"), BODIES)
def test_the_json_api_refuses_each_kind_naming_the_field(cast, lead, method, path, body, field):
    before = _stored()
    for character in SAMPLE:
        response = lead(method, path, body(f"Cost{character}Out"))
        assert response.status_code == 422, (hex(ord(character)), response.content[:300])
        assert response.json()["error"]["fields"][field] == [MESSAGE]
    assert _stored() == before


def test_the_json_api_refuses_all_66(cast, lead):
    for character in EVERY:
        response = lead("POST", "/risks", {"title": "Vendor", "description": f"a{character}"})
        assert response.status_code == 422, hex(ord(character))
        assert response.json()["error"]["fields"] == {"description": [MESSAGE]}
    assert not Risk.objects.exists()


def test_a_theme_named_with_one_is_refused_by_the_api_and_the_settings_page(
    cast, bearer, client_for
):
    response = Client().patch(
        "/api/v1/site-settings",
        json.dumps({"themes": [{"name": "Cost\ufffeOut", "enabled": True}]}),
        content_type="application/json",
        **bearer(cast.site_admin),
    )
    assert response.status_code == 422, response.content
    assert MESSAGE in json.dumps(response.json()["error"]["fields"])
    page = client_for(cast.site_admin).post(
        "/portfolio/settings/", {"theme-0-name": "Cost\ufffeOut", "theme-0-enabled": "on"}
    )
    assert page.status_code == 422
    assert "Unicode noncharacter" in page.content.decode()
    assert SiteSettings.load().themes == [] or all(
        "\ufffe" not in t["name"] for t in SiteSettings.load().themes
    )


def test_page_forms_and_query_parameters_refuse_each_kind_naming_the_field(cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    client = client_for(cast.lead)
    for character in SAMPLE:
        page = client.post(f"/projects/ALPHA/registers/work-packages/{wp.pk}/", {"name": character})
        assert page.status_code == 422, hex(ord(character))
        assert "<strong>Name</strong>" in page.content.decode()
        inline = client.post(
            f"/projects/ALPHA/registers/work-packages/{wp.pk}/",
            {"name": f"a{character}", "revision": "1"},
            HTTP_HX_REQUEST="true",
        )
        assert inline.status_code == 422 and inline["HX-Reswap"] == "none"
        flash = json.loads(inline["HX-Trigger"])["flash"]["message"]
        assert flash == f"name: {MESSAGE}"
        created = client.post(
            "/projects/ALPHA/registers/risks/", {"title": f"x{character}"}, HTTP_HX_REQUEST="true"
        )
        assert created.status_code == 422
        search = client.get("/projects/ALPHA/registers/work-packages/", {"q": character})
        assert search.status_code == 422 and "<strong>Search</strong>" in search.content.decode()
    wp.refresh_from_db()
    assert wp.name == "Build" and not Risk.objects.exists()


def test_a_path_holding_one_is_not_found(cast, client_for, bearer):
    assert client_for(cast.lead).get("/projects/AL%EF%BF%BEPHA/").status_code == 404
    response = Client().get("/api/v1/projects/ALPHA%EF%BF%BE/risks", **bearer(cast.lead))
    assert response.status_code == 404


@pytest.fixture
def everyone(cast):
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer"])
    use_group(EVERYONE)


def test_the_assistants_actions_refuse_each_kind_naming_the_argument(cast, bearer, everyone):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    cases = [
        ("add_risk", {"title": "{}"}, "title"),
        ("update_work_package", {"workPackageId": str(wp.pk), "commentary": "{}"}, "commentary"),
    ]
    for character in SAMPLE:
        for name, extra, field in cases:
            arguments = {"projectKey": "ALPHA"} | {
                k: v.format(f"a{character}") if v == "{}" else v for k, v in extra.items()
            }
            response = Client().post(
                f"/api/v1/agent/actions/{name}",
                json.dumps({"arguments": arguments}),
                content_type="application/json",
                **bearer(cast.lead),
            )
            assert response.status_code == 422, (name, hex(ord(character)), response.content)
            assert response.json()["error"]["fields"][f"arguments.{field}"] == [MESSAGE]
    assert not Risk.objects.exists()
    wp.refresh_from_db()
    assert not wp.commentary


@pytest.mark.django_db(transaction=True)
def test_the_mcp_tools_refuse_each_kind_in_the_api_words(cast, everyone):
    server = build_server(lambda: catalogue.request_for(cast.lead))

    async def go():
        async with McpClient(server) as session:
            return [
                await session.call_tool("add_risk", {"projectKey": "ALPHA", "title": f"a{c}"})
                for c in SAMPLE
            ]

    for result in run_async(go):
        assert result.is_error
        assert result.structured_content["error"]["code"] == "validation"
        assert result.structured_content["error"]["fields"]["title"] == [MESSAGE]
    assert not Risk.objects.exists()


def _csv_upload(lead_client, content: bytes, name="r.csv", project="ALPHA"):
    client, auth = lead_client
    return client.post(
        f"/api/v1/projects/{project}/risks/import",
        {"file": SimpleUploadedFile(name, content)},
        **auth,
    )


@pytest.fixture
def uploader(cast, bearer):
    return Client(), bearer(cast.lead)


def test_csv_import_refuses_every_noncharacter_naming_each_row_and_field(cast, uploader):
    lines = ["title,description"] + [f"Risk {i},bad{c}cell" for i, c in enumerate(EVERY)]
    response = _csv_upload(uploader, "\n".join(lines).encode("utf-8"))
    assert response.status_code == 422, response.content
    rows = response.json()["error"]["rows"]
    assert rows == [
        {"row": number, "field": "description", "message": MESSAGE}
        for number in range(2, 2 + len(EVERY))
    ]
    assert not Risk.objects.exists()


def _xlsx(cells: list[list[str]]) -> bytes:
    book = Workbook()
    for row in cells:
        book.active.append(row)
    buffer = io.BytesIO()
    book.save(buffer)  # openpyxl writes a noncharacter as it is (a corrupt file for U+FFFE)
    return buffer.getvalue()


def test_xlsx_import_refuses_each_kind(cast, uploader):
    legal_in_xml = [c for c in SAMPLE if c not in ("\ufffe", "\uffff")]
    content = _xlsx([["title", "description"]] + [[f"R{c}", "fine"] for c in legal_in_xml])
    response = _csv_upload(uploader, content, name="r.xlsx")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["rows"] == [
        {"row": number, "field": "title", "message": MESSAGE}
        for number in range(2, 2 + len(legal_in_xml))
    ]
    for character in ("\ufffe", "\uffff"):  # no XML holds them: the file cannot be read
        corrupt = _xlsx([["title"], [f"R{character}"]])
        answer = _csv_upload(uploader, corrupt, name="r.xlsx")
        assert 400 <= answer.status_code < 500, answer.content
        assert answer.json()["error"]["message"]
    assert not Risk.objects.exists()


# --- what was stored before the rule never corrupts a file --------------------------------------


STORED = "Cost" + "".join(SAMPLE) + "Out"
SHOWN = "Cost" + "\ufffd" * len(SAMPLE) + "Out"


@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
def test_a_stored_noncharacter_is_replaced_in_the_register_export_which_imports_back(
    cast, bearer, file_format
):
    client, auth = Client(), bearer(cast.lead)
    risk = Risk.objects.create(project=cast.project, title="Vendor")
    Risk.objects.filter(pk=risk.pk).update(title=STORED, description=STORED)
    response = client.get(f"{BASE}/risks/export?format={file_format}&shape=api", **auth)
    assert response.status_code == 200
    content = response.getvalue()  # streamed: read once
    if file_format == "xlsx":
        sheet = openpyxl.load_workbook(io.BytesIO(content)).active
        values = list(sheet.values)
        header = values[0]
        assert values[1][header.index("title")] == SHOWN
    else:
        assert SHOWN in content.decode("utf-8-sig")
        assert not cleaning.NONCHARACTERS.search(content.decode("utf-8-sig"))
    ProjectFactory(key="BETA", lead=cast.lead)
    back = client.post(
        "/api/v1/projects/BETA/risks/import",
        {"file": SimpleUploadedFile(f"back.{file_format}", content)},
        **auth,
    )
    assert back.status_code == 201, back.content
    assert Risk.objects.get(project__key="BETA").title == SHOWN


@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
def test_a_stored_noncharacter_theme_leaves_the_portfolio_export_whole(
    cast, client_for, file_format
):
    BusinessCase.objects.get_or_create(project=cast.project)
    BusinessCase.objects.filter(project=cast.project).update(theme="Cost\ufffeOut")
    health.refresh([cast.project.pk])  # the stored row, as the next derivation writes it
    response = client_for(cast.site_admin).get(f"/portfolio/export/?format={file_format}")
    assert response.status_code == 200
    if file_format == "xlsx":
        values = list(openpyxl.load_workbook(io.BytesIO(response.getvalue()))["Portfolio"].values)
        assert values[1][values[0].index("Theme")] == "Cost\ufffdOut"
    else:
        assert "Cost\ufffdOut" in response.getvalue().decode("utf-8-sig")
