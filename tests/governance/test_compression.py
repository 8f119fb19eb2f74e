"""Responses are gzip-compressed when the client asks (Accept-Encoding), never otherwise, and
never a page that shows a new API token (BREACH: docs/decisions/0045)."""

import gzip
import json

import pytest

from tests.factories import WorkPackageFactory

pytestmark = pytest.mark.django_db

GZIP = {"HTTP_ACCEPT_ENCODING": "gzip, deflate, br"}


def _page(cast):
    WorkPackageFactory.create_batch(5, project=cast.project)
    return f"/projects/{cast.project.key}/registers/work-packages/"


def test_an_html_page_is_compressed_when_asked_and_only_then(cast, client_for):
    client = client_for(cast.lead)
    url = _page(cast)

    asked = client.get(url, **GZIP)
    assert asked.status_code == 200
    assert asked["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in asked["Vary"]
    html = gzip.decompress(asked.content).decode()
    assert "Work packages" in html and "csrfmiddlewaretoken" in html

    plain = client.get(url)
    assert plain.status_code == 200
    assert not plain.has_header("Content-Encoding")
    assert "Accept-Encoding" in plain["Vary"]
    assert "Work packages" in plain.content.decode()
    assert len(asked.content) < len(plain.content) / 4


def test_a_json_answer_is_compressed_when_asked_and_only_then(cast, bearer):
    from django.test import Client

    WorkPackageFactory.create_batch(5, project=cast.project)
    url = f"/api/v1/projects/{cast.project.key}/work-packages"
    client = Client()

    asked = client.get(url, **bearer(cast.lead), **GZIP)
    assert asked.status_code == 200
    assert asked["Content-Encoding"] == "gzip"
    body = json.loads(gzip.decompress(asked.content))

    plain = client.get(url, **bearer(cast.lead))
    assert not plain.has_header("Content-Encoding")
    assert json.loads(plain.content) == body


def test_the_page_that_shows_a_new_token_is_never_compressed(cast, client_for):
    client = client_for(cast.lead)
    response = client.post("/profile/", {"name": "laptop"}, **GZIP)
    assert response.status_code == 201
    assert not response.has_header("Content-Encoding")
    assert "Accept-Encoding" in response["Vary"]
    assert "laptop" in response.content.decode()


def test_pages_are_compressed_at_the_configured_level_with_the_breach_padding(
    cast, client_for, settings
):
    """GZIP_LEVEL (default 1: a fraction of level 6's CPU for a few more bytes); Django's
    Heal-the-BREACH padding stays: a random-length file name in every gzip header."""
    client = client_for(cast.lead)
    url = _page(cast)
    # The table alone (the full register page is assembled: tests/registers/test_page_cache.py)
    htmx = {**GZIP, "HTTP_HX_REQUEST": "true"}
    for level in (1, 6):
        settings.GZIP_LEVEL = level
        answers = [client.get(url, **htmx) for _ in range(8)]
        for answer in answers:
            assert answer["Content-Encoding"] == "gzip"
            assert int(answer["Content-Length"]) == len(answer.content)
            assert answer.content[3] & gzip.FNAME  # the padding's flag
            html = gzip.decompress(answer.content)
            assert b'id="register-table"' in html
            end = answer.content.index(b"\x00", 10)  # the padding's end
            # The deflate stream is the one this level gives for that page.
            assert answer.content[end + 1 :] == gzip.compress(html, level, mtime=0)[10:]
        # The padding's length varies from answer to answer.
        assert len({answer.content.index(b"\x00", 10) for answer in answers}) > 1
    settings.GZIP_LEVEL = 1
    assert gzip.compress(html, 1, mtime=0) != gzip.compress(html, 6, mtime=0)
