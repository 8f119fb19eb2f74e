"""Responses are gzip-compressed when the client asks (Accept-Encoding), never otherwise, and
never a page that shows a new API token (BREACH: docs/decisions.md, Security)."""

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
