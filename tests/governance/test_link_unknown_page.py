"""A wiki link whose page is not found is refused for the page alone: the URL it would have
taken from the page is not also asked for (one refusal, the true one)."""

import pytest

from governance.cleaning import FieldErrors
from governance.links import clean_link

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("url", [None, "", "  "])
def test_an_unknown_page_is_the_only_refusal_when_no_url_is_given(cast, url):
    errors = FieldErrors()
    raw = {"type": "confluence", "pageId": "424242", "url": url}
    clean_link(raw, "supportingLinks[0]", errors, project_key=cast.project.key)
    assert dict(errors) == {"supportingLinks[0].pageId": ["No wiki page with id 424242."]}


def test_a_url_given_with_an_unknown_page_is_still_checked(cast):
    errors = FieldErrors()
    raw = {"type": "confluence", "pageId": "424242", "url": "ftp://example.org/x"}
    clean_link(raw, "supportingLinks[0]", errors, project_key=cast.project.key)
    assert set(dict(errors)) == {"supportingLinks[0].pageId", "supportingLinks[0].url"}
