"""The inputs this round added, walked with the hostile-value classes: an import's
`previewDigest` and `dryRun`, and the OAuth client registration body. Each answers a refusal
or a preview in words, never a server error, and stores nothing it refused."""

import json
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from registers.models import Risk

HOSTILE = [
    "\x00",
    "a\x00b",
    "\ud800",
    "NaN",
    "Infinity",
    str(2**31),
    str(2**63),
    "1" + "0" * 400,
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
