"""The inputs this round added, walked with the hostile-value classes: an import's
`previewDigest` and `dryRun`, and the OAuth client registration body. Each answers a refusal
or a preview in words, never a server error, and stores nothing it refused."""

import json
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from config.layers import APPS
from registers.models import Risk

HOSTILE = [
    "\x00",
    "a\x00b",
    "\ud800",
    "a\ufffeb",
    "\U0001ffff",
    "NaN",
    "Infinity",
    str(2**31),
    str(2**63),
    "1" + "0" * 400,
    "9" * 4300,
    "9" * 5000,
    "9999-12-31",
    "x" * 100_000,
]
CSV = b"title,impact,likelihood\nSupplier late,3,2\n"


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE)
def test_an_import_with_a_hostile_preview_digest_or_dry_run_is_refused_or_previewed(
    cast, bearer, value
):
    client, auth = Client(), bearer(cast.lead)
    url = "/api/v1/projects/ALPHA/risks/import"
    # As a client sends it: bytes (a lone surrogate as the bytes UTF-8 would give it).
    raw = value.encode("utf-8", "surrogatepass")
    digest = client.post(
        url,
        data={"file": SimpleUploadedFile("r.csv", CSV), "previewDigest": raw},
        **auth,
    )
    assert digest.status_code in (400, 409, 422), digest.content[:300]
    assert digest.json()  # the app's error body, in words
    dry = client.post(
        f"{url}?dryRun={quote(raw[:2000])}", data={"file": SimpleUploadedFile("r.csv", CSV)}, **auth
    )
    assert dry.status_code < 500, dry.content[:300]
    assert not Risk.objects.filter(project=cast.project).exists() or dry.status_code in (
        200,
        201,
    )


@pytest.mark.django_db
@pytest.mark.parametrize("value", [*HOSTILE, 2**63, 1e308, None, [], {"a": 1}, True])
@pytest.mark.parametrize("member", ["client_name", "redirect_uris", "grant_types"])
def test_a_client_registration_with_a_hostile_member_breaks_nothing(value, member):
    body = {
        "client_name": "Inspector",
        "redirect_uris": ["http://127.0.0.1:33418/callback"],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    }
    body[member] = value if member != "redirect_uris" or not isinstance(value, str) else [value]
    answer = Client().post(
        "/oauth/register/", json.dumps(body, allow_nan=True), content_type="application/json"
    )
    assert answer.status_code < 500, answer.content[:300]


@pytest.mark.django_db
@pytest.mark.parametrize("value", [*HOSTILE, "²", "٣", "-1", "0", "1.5", " 2 "])
def test_a_plan_import_with_a_hostile_outline_level_is_refused_or_previewed(
    cast, bearer, client_for, value
):
    """The outline level of a Microsoft Project plan, as an API query parameter and as the
    import page's form field: a whole number from 1 to 100, else refused naming the field."""
    import datetime as dt

    from registers.models import WorkPackage
    from registers.sample_plan import plan as sample_plan

    plan = sample_plan(20, start=dt.date(2027, 1, 4), today=dt.date(2026, 11, 25))
    client, auth = Client(), bearer(cast.lead)
    raw = value.encode("utf-8", "surrogatepass")
    answer = client.post(
        f"/api/v1/projects/ALPHA/work-packages/import?dryRun=true&outlineLevel={quote(raw[:2000])}",
        data={"file": SimpleUploadedFile("plan.xml", plan)},
        **auth,
    )
    assert answer.status_code in (200, 400, 422), answer.content[:300]
    if answer.status_code == 422:
        assert "outlineLevel" in answer.json()["error"]["fields"]
    page = client_for(cast.lead).post(
        "/projects/ALPHA/registers/work-packages/import/",
        {"file": SimpleUploadedFile("plan.xml", plan), "outlineLevel": value.replace("\ud800", "")},
    )
    assert page.status_code in (200, 422), page.content[:300]
    assert not WorkPackage.objects.filter(project=cast.project).exists()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("12", 12),
        ("0", 0),
        ("²", None),  # str.isdigit says yes; int() refuses it
        ("٣", None),  # int() would read it as 3
        ("1" * 18, int("1" * 18)),
        ("1" * 19, None),  # past a 64-bit column
        ("1" * 5000, None),  # past int()'s digit limit
        ("-1", None),
        (" 1", None),
        ("1.0", None),
        ("\x00", None),
        ("\ud800", None),
        ("", None),
        (None, None),
        (7, 7),
    ],
)
def test_a_whole_number_is_ascii_digits_that_fit_a_column(raw, expected):
    """Every revision, id and level read from a form, a header, a URL or a file goes through
    cleaning.whole_number: no hostile digit reaches int() or the database."""
    from governance import cleaning

    assert cleaning.whole_number(raw) == expected


def test_no_app_module_reads_digits_with_isdigit_alone():
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[2]
    found = [
        f"{path.relative_to(root)}:{n}"
        for app in APPS
        for path in (root / app).rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.isdigit\(\)", line)
        and "isascii" not in line
        and "migrations" not in path.parts
    ]
    assert found == []
