"""The record-decision form inside the risk register labels every field with the decision
register's own label (it had six empty labels): as a row form and as its own page."""

import re

import pytest

from tests.factories import RiskFactory

HX = {"HTTP_HX_REQUEST": "true"}
LABELS = ["Decision", "Made on", "Made by", "Steering minutes", "Rationale"]
LABELS += ["Notes on the decision", "Evidence links"]


@pytest.mark.parametrize("htmx", [True, False])
def test_every_field_of_the_record_decision_form_has_its_label(htmx, cast, client_for):
    risk = RiskFactory(project=cast.project, title="Outage", materialised=True)
    url = f"/projects/ALPHA/registers/risks/{risk.pk}/record-decision/"
    html = client_for(cast.lead).get(url, **(HX if htmx else {})).content.decode()
    form = html[html.index("Record the decision") :]
    labels = [
        re.sub(r"<[^>]+>|\s+\*", "", text).strip()
        for text in re.findall(r"<label for=\"f-new-[^\"]+\">(.*?)</label>", form)
    ]
    assert labels == LABELS
