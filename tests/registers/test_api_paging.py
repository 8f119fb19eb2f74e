"""The registers' API lists answer pages: `cursor` and `pageSize` (1 to 500, default 100),
`{items, next}` with `next` null on the last page, in the register's order with the id as the
last key, so every row shows once across the pages whatever is added between two requests;
a cursor the list did not give is refused with 400 in words; the document declares it all."""

import datetime as dt
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils import timezone

from governance import paging
from governance.models import Project
from registers import selectors
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    WorkPackageFactory,
)
from tests.registers.test_queries import REGISTERS, fill

BASE = "/api/v1/projects/ALPHA"
MODELS = {
    "work-packages": WorkPackage,
    "risks": Risk,
    "decisions": Decision,
    "changes": ChangeRequest,
}
FACTORIES = {
    "work-packages": WorkPackageFactory,
    "risks": RiskFactory,
    "decisions": DecisionFactory,
    "changes": ChangeRequestFactory,
}
IN_ORDER = {
    "work-packages": selectors.work_packages,
    "risks": selectors.risks,
    "decisions": selectors.decisions,
    "changes": selectors.changes,
}


@pytest.fixture
def reader(cast, bearer):
    client, auth = Client(), bearer(cast.viewer)
    return lambda url: client.get(url if url.startswith("http") else BASE + url, **auth)


def walk(reader, url: str) -> tuple[list[str], int]:
    """The ids of every page from `url` on, following `next`; and the pages read."""
    ids: list[str] = []
    pages = 0
    while url:
        response = reader(url)
        assert response.status_code == 200, response.content
        body = response.json()
        assert set(body) == {"items", "next"}
        ids.extend(item["id"] for item in body["items"])
        pages += 1
        url = body["next"]
    return ids, pages


@pytest.mark.parametrize("register", REGISTERS)
def test_the_pages_hold_every_row_once_in_the_registers_order(cast, reader, register):
    fill(cast, register, 23)
    expected = [str(r.pk) for r in IN_ORDER[register](cast.project)]
    ids, pages = walk(reader, f"/{register}?pageSize=5")
    assert ids == expected
    assert pages == 5
    first = reader(f"/{register}").json()
    assert len(first["items"]) == 23 and first["next"] is None  # 100 a page by default


@pytest.mark.parametrize("register", REGISTERS)
def test_rows_alike_in_every_sort_key_but_the_id_page_once_each(cast, reader, register):
    """Ten rows created at the same instant (and, for the work packages, with the same order
    and dates; their names are unique): the id decides, and no page repeats or drops one."""
    factory = FACTORIES[register]
    rows = [
        factory(project=cast.project, sort_order=None, planned_start_date=None, name=f"P{n}")
        if register == "work-packages"
        else factory(project=cast.project)
        for n in range(10)
    ]
    MODELS[register].objects.filter(pk__in=[r.pk for r in rows]).update(
        created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    )
    for size in (1, 3, 4):
        ids, _ = walk(reader, f"/{register}?pageSize={size}")
        assert sorted(ids) == sorted(str(r.pk) for r in rows)
        assert len(ids) == len(set(ids))


@pytest.mark.parametrize("register", REGISTERS)
def test_rows_added_between_two_requests_neither_repeat_nor_hide_a_row(cast, reader, register):
    """Rows added while a client pages (newest first, so before the cursor, or after it) do not
    shift the pages: each row that was there from the start shows exactly once."""
    fill(cast, register, 12)
    before = {str(pk) for pk in MODELS[register].objects.values_list("pk", flat=True)}
    seen: list[str] = []
    url = f"/{register}?pageSize=4"
    added = 0
    while url:
        body = reader(url).json()
        seen.extend(item["id"] for item in body["items"])
        url = body["next"]
        for when in (timezone.now(), dt.datetime(2000, 1, 1, tzinfo=dt.UTC)):
            row = FACTORIES[register](project=cast.project)
            MODELS[register].objects.filter(pk=row.pk).update(created_at=when)
            added += 1
    assert len(seen) == len(set(seen)), "a row showed twice"
    assert before <= set(seen), "a row was skipped"
    assert added >= 6


@pytest.mark.parametrize(
    "cursor",
    ["nonsense", "", "a" * 200, "W1siaSIsIDFdXQ:1abc:def", "%00"],
)
def test_a_cursor_the_list_did_not_give_is_refused_in_words(cast, reader, cursor):
    RiskFactory(project=cast.project)
    response = reader(f"/risks?cursor={cursor}")
    if cursor == "":  # blank is no cursor: the first page
        assert response.status_code == 200
        return
    body = response.json()
    assert response.status_code in (400, 422), body
    if response.status_code == 400:
        assert body["error"]["code"] == "bad_request"
        assert "cursor" in body["error"]["message"] and "next" in body["error"]["message"]


def test_a_cursor_of_another_register_or_another_shape_is_refused(cast, reader):
    for _ in range(3):
        RiskFactory(project=cast.project)
        DecisionFactory(project=cast.project)
    risk_next = reader("/risks?pageSize=1").json()["next"]
    cursor = parse_qs(urlsplit(risk_next).query)["cursor"][0]
    response = reader(f"/decisions?cursor={cursor}")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == paging.CURSOR_MESSAGE
    # Signed by the list but of another length (an order changed by a release): refused too.
    wrong = paging.make_cursor([1], salt="registers:risks")
    assert reader(f"/risks?cursor={wrong}").status_code == 400


@pytest.mark.parametrize("size", ["0", "-1", "501", "100000", "ten", "1.5"])
def test_a_page_size_out_of_its_bounds_is_refused_naming_it(cast, reader, size):
    response = reader(f"/decisions?pageSize={size}")
    assert response.status_code == 422
    assert "pageSize" in response.json()["error"]["fields"]


def test_the_page_size_bounds_themselves_are_taken_and_next_keeps_the_size(cast, reader):
    for _ in range(3):
        ChangeRequestFactory(project=cast.project)
    one = reader("/changes?pageSize=1").json()
    assert len(one["items"]) == 1
    query = parse_qs(urlsplit(one["next"]).query)
    assert query["pageSize"] == ["1"] and query["cursor"]
    assert one["next"].startswith("http://testserver/api/v1/projects/ALPHA/changes?")
    assert len(reader("/changes?pageSize=500").json()["items"]) == 3


def test_a_cursor_is_opaque_and_keeps_no_row_text_in_clear(cast, reader):
    WorkPackageFactory(project=cast.project, name="Secret name")
    WorkPackageFactory(project=cast.project, name="Other")
    cursor = parse_qs(urlsplit(reader("/work-packages?pageSize=1").json()["next"]).query)
    assert "Secret" not in cursor["cursor"][0] and "Other" not in cursor["cursor"][0]


def test_the_page_shows_only_the_projects_rows(cast, reader):
    RiskFactory(project=cast.project)
    RiskFactory(project=Project.objects.get(key="OTHER"))
    assert len(reader("/risks").json()["items"]) == 1


def test_the_document_declares_the_paging_of_every_register_list(client):
    document = client.get("/api/v1/openapi.json").json()
    schemas = document["components"]["schemas"]
    pages = {
        "work-packages": "WorkPackagePage",
        "risks": "RiskPage",
        "decisions": "DecisionPage",
        "changes": "ChangeRequestPage",
    }
    items = {
        "work-packages": "WorkPackage",
        "risks": "Risk",
        "decisions": "Decision",
        "changes": "ChangeRequest",
    }
    for register, name in pages.items():
        operation = document["paths"][f"/api/v1/projects/{{key}}/{register}"]["get"]
        parameters = {p["name"]: p for p in operation["parameters"]}
        assert parameters["cursor"]["in"] == "query"
        assert not parameters["cursor"]["required"]
        size = parameters["pageSize"]["schema"]
        assert (size["minimum"], size["maximum"], size["default"]) == (1, 500, 100)
        answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert answer == {"$ref": f"#/components/schemas/{name}"}
        page = schemas[name]
        assert page["required"] == ["items", "next"]
        assert page["properties"]["items"]["items"] == {
            "$ref": f"#/components/schemas/{items[register]}"
        }
        assert page["properties"]["next"]["type"] == ["string", "null"]
        assert "400" in operation["responses"]
