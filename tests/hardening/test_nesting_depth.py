"""Nesting depth, bounded once per reader: every door that parses untrusted JSON reads it
through `cleaning.json_loads` (a depth and size limit, checked before the parser recurses),
and the Microsoft Project reader caps both the XML nesting and the outline of tasks. Walked
over the class of depths (just past the limit, a thousand, a hundred thousand, unclosed) at
every door: the JSON API, /mcp, the OAuth registration, the Jira webhook, the status form,
the import of CSV and XLSX cells (API dry run and commit, the page), and the plan import
(API dry run and commit, the page, the assistant's action). Each answers 4xx in words that
name the depth and the limit; nothing is written and nothing answers 500."""

import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from openpyxl import Workbook

from agent import catalogue
from governance import cleaning, webhooks
from governance.errors import ValidationFailed
from governance.services import token_create
from registers import mspdi
from registers.models import Decision, WorkPackage
from status.models import ProjectStatus
from tests.agent.conftest import EVERYONE, use_group

pytestmark = pytest.mark.django_db

LIMIT = cleaning.MAX_JSON_DEPTH
DEPTHS = [LIMIT + 1, 1_000, 100_000]
BASE = "/projects/ALPHA/registers"


def nested(depth: int, *, closed: bool = True, opener: str = "[") -> str:
    closer = "]" if opener == "[" else "}"
    inner = '"x"' if opener == "[" else ""
    if opener == "{":
        return '{"a":' * depth + "1" + "}" * (depth if closed else 0)
    return opener * depth + inner + closer * (depth if closed else 0)


# --- the reader ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1", 0),
        ('"[[[{{{"', 0),
        ("[]", 1),
        ('{"a": [1, {"b": "]]]\\"[["}]}', 3),
        ("[[1], [2], [[3]]]", 3),
        ("[[[", 3),
        ("[1, 2", 1),
        (nested(40), 40),
        (nested(40, opener="{"), 40),
    ],
)
def test_the_depth_is_counted_without_parsing(text, depth):
    assert cleaning.json_nesting(text) == depth
    assert cleaning.json_nesting(text.encode()) == depth


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("closed", [True, False])
@pytest.mark.parametrize("opener", ["[", "{"])
def test_the_reader_refuses_past_the_limit_before_parsing(depth, closed, opener):
    with pytest.raises(cleaning.JsonRefused) as refused:
        cleaning.json_loads(nested(depth, closed=closed, opener=opener), what="The body")
    assert (
        str(refused.value)
        == f"The body nests more than {LIMIT} levels deep; at most {LIMIT} are read."
    )
    assert isinstance(refused.value, ValueError)
    assert cleaning.json_loads(nested(LIMIT, opener=opener)) is not None
    with pytest.raises(cleaning.JsonRefused, match="at most 10 are read"):
        cleaning.json_loads("x" * 11, max_chars=10)


# --- the JSON doors --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_api_refuses_a_deep_body_naming_the_limit(cast, bearer, depth):
    body = '{"title": "Deep", "impact": ' + nested(depth) + "}"
    answer = Client().post(
        "/api/v1/projects/ALPHA/risks", body, content_type="application/json", **bearer(cast.lead)
    )
    assert answer.status_code == 400, answer.content
    assert f"nests more than {LIMIT} levels deep" in answer.json()["error"]["message"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_mcp_refuses_a_deep_message_without_a_500(cast, depth):
    from governance.tracker.local import scripting

    scripting.ensure_group(EVERYONE, members=["lead", "editor"])
    use_group(EVERYONE)
    _, raw = token_create(user=cast.lead, name="mcp")
    message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    text = json.dumps(message)[:-1] + ', "params": ' + nested(depth) + "}"
    answer = Client().post(
        "/mcp",
        data=text,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["data"]["code"] == "bad_request"
    assert f"The message nests more than {LIMIT} levels deep" in body["error"]["message"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_oauth_registration_refuses_a_deep_body(depth):
    body = '{"client_name": "Deep", "redirect_uris": ' + nested(depth) + "}"
    answer = Client().post("/oauth/register/", body, content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert f"The registration nests more than {LIMIT} levels deep" in answer.content.decode()


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_signed_jira_webhook_refuses_a_deep_body(monkeypatch, depth):
    monkeypatch.setattr(webhooks, "verify", lambda authorization, request: {"iss": "client-id"})
    body = '{"webhookEvent": "jira:issue_updated", "issue": ' + nested(depth) + "}"
    answer = Client().post(
        "/hooks/jira/", body, content_type="application/json", HTTP_AUTHORIZATION="Bearer x"
    )
    assert answer.status_code == 400, answer.content
    assert f"The body nests more than {LIMIT} levels deep" in answer.json()["error"]["message"]


@pytest.mark.parametrize("depth", DEPTHS)
def test_the_status_form_takes_no_project_metrics_however_deep(cast, client_for, depth):
    """Project metrics are the API's (whose body depth is refused above): the page's form
    ignores a posted one, deep or not, and parses nothing of it."""
    answer = client_for(cast.lead).post(
        "/projects/ALPHA/status/edit/",
        {"overallRag": "Green", "projectMetrics": nested(depth, opener="{")},
    )
    assert answer.status_code == 302, answer.status_code
    assert ProjectStatus.objects.get(project=cast.project).project_metrics is None


# --- JSON in the cells of an import file ------------------------------------------------------

CELLS = [
    ("work-packages", "name,budgetPhasing", "Deep"),
    ("decisions", "decision,evidenceLinks", "Deep"),
    ("decisions", "decision,minutesRef", "Deep"),
]


def _csv(header: str, first: str, cell: str) -> bytes:
    return f'{header}\n{first},"{cell.replace(chr(34), chr(34) * 2)}"\n'.encode()


def _xlsx(header: str, first: str, cell: str) -> bytes:
    book = Workbook()
    sheet = book.active
    sheet.append(header.split(","))
    sheet.append([first, cell])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(("register", "header", "first"), CELLS)
@pytest.mark.parametrize("depth", [LIMIT + 1, 1_000, 5_000])
@pytest.mark.parametrize("maker", [_csv, _xlsx], ids=["csv", "xlsx"])
def test_a_deep_json_cell_is_a_refused_row_at_every_door(
    cast, bearer, client_for, register, header, first, depth, maker
):
    content = maker(header, first, nested(depth, opener="{"))
    name = "f.csv" if maker is _csv else "f.xlsx"
    field = header.split(",")[1]
    auth, client = bearer(cast.lead), Client()
    url = f"/api/v1/projects/ALPHA/{register}/import"
    dry = client.post(url + "?dryRun=true", {"file": SimpleUploadedFile(name, content)}, **auth)
    assert dry.status_code == 200, dry.content
    errors = dry.json()["errors"]
    assert [(e["row"], e["field"]) for e in errors] == [(2, field)]
    assert f"nests more than {LIMIT} levels deep" in errors[0]["message"]
    commit = client.post(url, {"file": SimpleUploadedFile(name, content)}, **auth)
    assert commit.status_code == 422, commit.content
    assert f"nests more than {LIMIT} levels deep" in json.dumps(commit.json())
    page = client_for(cast.lead).post(
        f"{BASE}/{register}/import/", {"file": SimpleUploadedFile(name, content)}
    )
    assert page.status_code == 422
    assert f"nests more than {LIMIT} levels deep" in page.content.decode()
    assert not WorkPackage.objects.exists() and not Decision.objects.exists()


# --- Microsoft Project plans ---------------------------------------------------------------------

NS = "http://schemas.microsoft.com/project"


def _plan(tasks: str, inside: str = "") -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><Project xmlns="{NS}"><Tasks>'
        "<Task><UID>0</UID><ID>0</ID><Name>P</Name><OutlineLevel>0</OutlineLevel></Task>"
        f"{tasks}</Tasks>{inside}</Project>"
    )


def _levels(count: int) -> str:
    return _plan(
        "".join(
            f"<Task><UID>{n}</UID><ID>{n}</ID><Name>T{n}</Name><OutlineLevel>{n}</OutlineLevel>"
            "<Start>2027-01-04T08:00:00</Start><Finish>2027-01-05T17:00:00</Finish></Task>"
            for n in range(1, count + 1)
        )
    )


def _outline_number(dots: int) -> str:
    number = ".".join(["1"] * (dots + 1))
    return _plan(
        f"<Task><UID>1</UID><ID>1</ID><Name>Deep</Name><OutlineNumber>{number}</OutlineNumber></Task>"
    )


def _xml_nesting(depth: int) -> str:
    return _plan(
        "<Task><UID>1</UID><ID>1</ID><Name>A</Name><OutlineLevel>1</OutlineLevel></Task>",
        "<Extra>" * depth + "</Extra>" * depth,
    )


PLANS = [
    (
        _levels(1_000),
        "The plan nests tasks 1,000 levels deep (task 1000 'T1000'); at most 100 are supported.",
    ),
    (_levels(mspdi.MAX_OUTLINE_DEPTH + 1), "The plan nests tasks 101 levels deep"),
    (_outline_number(100_000), "The plan nests tasks 100,001 levels deep (task 1 'Deep')"),
    (_xml_nesting(1_000), f"more than {cleaning.MAX_XML_DEPTH} levels deep"),
    (_xml_nesting(100_000), f"more than {cleaning.MAX_XML_DEPTH} levels deep"),
]


@pytest.mark.parametrize(
    ("xml", "words"), PLANS, ids=["1000", "101", "dots", "xml1000", "xml100000"]
)
def test_a_deep_plan_is_refused_in_words_at_every_door(cast, bearer, client_for, xml, words):
    from governance.tracker.local import scripting

    auth, client = bearer(cast.lead), Client()
    url = "/api/v1/projects/ALPHA/work-packages/import"
    for query in ("?dryRun=true", ""):
        answer = client.post(
            url + query, {"file": SimpleUploadedFile("p.xml", xml.encode())}, **auth
        )
        assert answer.status_code == 422, answer.content
        assert words in json.dumps(answer.json(), ensure_ascii=False)
    page = client_for(cast.lead).post(
        f"{BASE}/work-packages/import/", {"file": SimpleUploadedFile("p.xml", xml.encode())}
    )
    assert page.status_code == 422
    assert re.sub(r"'", "&#x27;", words) in page.content.decode()
    scripting.ensure_group(EVERYONE, members=["lead"])
    use_group(EVERYONE)
    ctx = catalogue.Context(request=catalogue.request_for(cast.lead), client="test")
    with pytest.raises(ValidationFailed) as refused:
        catalogue.run(ctx, "import_project_plan", {"projectKey": "ALPHA", "xml": xml})
    assert words in " ".join(refused.value.fields["xml"])
    assert not WorkPackage.objects.exists()


def test_a_plan_at_the_depth_limit_imports():
    from registers.mspdi import _rows, _tasks

    rows, problems, _ = _rows(_tasks(_levels(mspdi.MAX_OUTLINE_DEPTH).encode())[0], 1)
    assert len(rows) == 1 and not problems
