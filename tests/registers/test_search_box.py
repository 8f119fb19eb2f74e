"""The register's search box shows the text that was searched for, as typed."""

import re
from html import unescape

import pytest

from tests.factories import WorkPackageFactory

pytestmark = pytest.mark.django_db


def _search_value(page: bytes) -> str:
    box = re.search(r'<input type="search" name="q" value="([^"]*)"', page.decode())
    assert box, "no search box"
    return unescape(box.group(1))


def test_the_search_box_is_empty_without_a_search_and_keeps_the_words_typed(cast, client_for):
    WorkPackageFactory(project=cast.project, name="Build the platform")
    WorkPackageFactory(project=cast.project, name="Train the users")
    client = client_for(cast.viewer)
    url = "/projects/ALPHA/registers/work-packages/"
    assert _search_value(client.get(url).content) == ""
    found = client.get(url, {"q": "  build  PLATFORM "})
    assert _search_value(found.content) == "build  PLATFORM"
    table = found.content.decode().split('id="register-table"', 1)[1]
    assert "Build the platform" in table
    assert "Train the users" not in table  # the pictures above show every row, by design
