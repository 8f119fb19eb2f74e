"""Generated sentences take the article a person would write: "a Blocked work package", "an
Opportunity", "an In Progress work package". One helper (governance.formatting.with_article)
picks it by sound, for every enum value a sentence can interpolate; no sentence hard-codes an
article before an interpolated word."""

import re
from pathlib import Path

import pytest

from charter.models import APPROVAL_STATUSES, BAU_HANDOVER_STATES, SEVERITIES
from config.layers import APPS
from governance.errors import ValidationFailed
from governance.formatting import with_article
from governance.models import BR_CADENCES, RAG_CHOICES
from governance.permissions import caller_for
from registers.models import (
    APPLICATION_STATES,
    CHANGE_DIMENSIONS,
    CHANGE_STATUSES,
    DECISION_STATES,
    RISK_DIRECTIONS,
    RISK_STATUSES,
    RISK_TREATMENTS,
    WP_STATUSES,
)
from registers.services import risk_create, work_package_create
from status.models import CONFIDENCES, REPORT_STATES, REPORTING_CADENCES

ROOT = Path(__file__).resolve().parent.parent.parent
ENUM_VALUES = sorted(
    {
        *WP_STATUSES,
        *RISK_STATUSES,
        *RISK_DIRECTIONS,
        *(t for treatments in RISK_TREATMENTS.values() for t in treatments),
        *DECISION_STATES,
        *CHANGE_STATUSES,
        *CHANGE_DIMENSIONS,
        *APPLICATION_STATES,
        *RAG_CHOICES,
        *BR_CADENCES,
        *APPROVAL_STATUSES,
        *BAU_HANDOVER_STATES,
        *SEVERITIES,
        *CONFIDENCES,
        *REPORT_STATES,
        *REPORTING_CADENCES,
    }
)
# Every enum value that starts with a vowel sound; all the others start with a consonant one.
VOWEL_SOUNDS = {
    "Accept",
    "Acknowledged",
    "Amber",
    "Annual",
    "Applied",
    "Approved",
    "Archived",
    "Avoid",
    "AwaitingApplication",
    "Enhance",
    "Escalated",
    "Exploring",
    "Ignore",
    "In Progress",
    "InMaintenance",
    "InRealisation",
    "Open",
    "Opportunity",
    "Other",
    "Unknown",
}


@pytest.mark.parametrize("value", ENUM_VALUES)
def test_every_enum_value_takes_the_article_of_its_sound(value):
    article = "an" if value in VOWEL_SOUNDS else "a"
    assert with_article(value) == f"{article} {value}"
    assert with_article(value, capital=True) == f"{article.capitalize()} {value}"


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("unit", "a unit"),
        ("one-off", "a one-off"),
        ("European supplier", "a European supplier"),
        ("hour", "an hour"),
        ("update", "an update"),
    ],
)
def test_the_article_follows_the_sound_not_the_letter(word, expected):
    assert with_article(word) == expected


def test_the_register_sentences_read_as_written(cast):
    lead = caller_for(cast.lead, cast.project)
    with pytest.raises(ValidationFailed) as refused:
        risk_create(
            caller=lead,
            data={"title": "Early launch", "direction": "Opportunity", "treatment": "Mitigate"},
        )
    assert refused.value.fields["treatment"][0].startswith("An Opportunity is treated by")
    for status, sentence in (
        ("Blocked", "A Blocked work package has progress between 10 and 90."),
        ("In Progress", "An In Progress work package has progress between 10 and 90."),
    ):
        with pytest.raises(ValidationFailed) as refused:
            work_package_create(
                caller=lead, data={"name": "Portal", "status": status, "progress": 100}
            )
        assert sentence in [m for ms in refused.value.fields.values() for m in ms]


# An article written before an interpolated word: f"A {x}", "an {{ x }}", "a %s".
HARD_CODED = re.compile(r"(?<![A-Za-z])[Aa]n? (\{|%s|%\()")


def test_no_sentence_hard_codes_an_article_before_an_interpolated_word():
    found = []
    for folder in APPS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if HARD_CODED.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    for path in sorted((ROOT / "templates").rglob("*.html")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HARD_CODED.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
