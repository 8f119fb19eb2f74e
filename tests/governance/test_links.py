"""The one link cleaner (supportingLinks and evidenceLinks): every malformed entry is named,
never a server error."""

import pytest

from governance.cleaning import FieldErrors
from governance.links import clean_links

STORED = [{"id": "a", "label": "Paper", "url": "https://w.example/p", "type": "link"}]


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"id": ["x"], "url": "https://a.example"}, "links[0].id"),
        ({"url": {"a": 1}}, "links[0].url"),
        ({"url": ["https://a.example"]}, "links[0].url"),
        ({"url": "https://a.example", "type": ["link"]}, "links[0].type"),
        ({"url": "https://a.example", "templateKind": ["boardPaper"]}, "links[0].templateKind"),
        ({"url": "ftp://a.example"}, "links[0].url"),
        ({"url": "https://a.example", "colour": "red"}, "links[0].colour"),
        (7, "links[0]"),
    ],
)
def test_malformed_entries_are_named(db, entry, field):
    errors = FieldErrors()
    assert clean_links([entry], "links", errors, stored=STORED) is None
    assert field in errors


def test_an_entry_matching_a_stored_link_keeps_its_id(db):
    errors = FieldErrors()
    links = clean_links(
        [{"url": "https://w.example/p", "label": "New"}], "links", errors, stored=STORED
    )
    assert not errors and links[0]["id"] == "a" and links[0]["label"] == "New"


def test_malformed_links_answer_422_through_the_api(cast, bearer):
    import json

    from django.test import Client

    client = Client()
    decision = client.post(
        "/api/v1/projects/ALPHA/decisions",
        data=json.dumps({"decision": "D", "evidenceLinks": [{"url": {"a": 1}}]}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert decision.status_code == 422
    assert "evidenceLinks[0].url" in decision.json()["error"]["fields"]
    charter = client.patch(
        "/api/v1/projects/ALPHA/charter",
        data=json.dumps({"supportingLinks": [{"id": ["x"], "url": "https://a.example"}]}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert charter.status_code == 422
    assert "supportingLinks[0].id" in charter.json()["error"]["fields"]
