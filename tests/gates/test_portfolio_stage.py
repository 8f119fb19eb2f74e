"""The portfolio's stage columns and filter: each row's current stage and days at gate, the
filter by stage name or "at a gate", in the API, the page and the export, with the same
number of queries at 3 projects as at 30."""

import datetime as dt

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gates.models import GateReview, Stage
from tests.factories import UserFactory
from tests.portfolio.test_portfolio import make_project, rows


def _staged(numbers, user):
    """Projects whose stage n % 3 runs; every other one has its gate review waiting
    (requested n % 5 days ago)."""
    for n in numbers:
        project = make_project(f"G{n:03d}", browsers=[user])
        for position, name in enumerate(["Initiation", "Design", "Build"], start=1):
            Stage.objects.create(
                project=project,
                position=position,
                name=name,
                state="Current" if position == n % 3 + 1 else "Planned",
            )
        if n % 2 == 0:
            GateReview.objects.create(
                stage=Stage.objects.get(project=project, state="Current"),
                requested_at=timezone.now() - dt.timedelta(days=n % 5),
                requested_by_account_id="someone",
            )


@pytest.fixture
def user(db):
    return UserFactory(username="admin2", admin=True)


@pytest.fixture
def admin(user, client_for):
    return client_for(user)


def test_each_row_says_its_stage_and_days_at_gate(admin, user):
    _staged(range(4), user)
    found = {r["projectKey"]: r for r in rows(admin)}
    assert found["G000"]["currentStage"] == "Initiation"
    assert found["G000"]["daysAtGate"] == 0
    assert found["G001"]["currentStage"] == "Design" and found["G001"]["daysAtGate"] is None
    assert found["G002"]["daysAtGate"] == 2


def test_the_stage_filter(admin, user):
    _staged(range(6), user)
    assert {r["projectKey"] for r in rows(admin, "?stage=design")} == {"G001", "G004"}
    assert {r["projectKey"] for r in rows(admin, "?stage=atGate")} == {"G000", "G002", "G004"}
    page = admin.get("/portfolio/?stage=atGate").content.decode()
    assert "At a gate (awaiting the sponsor)" in page and "G002" in page and "G001" not in page
    assert page.count('value="atGate"') == 1  # chosen once, as itself, never as a stage's name
    export = admin.get("/portfolio/export/?format=csv&stage=Build")
    text = b"".join(export.streaming_content).decode()
    assert "Current stage" in text and "Days at gate" in text
    assert "G002" in text and "G001" not in text


def _count(client, url):
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries)


URLS = [
    "/portfolio/",
    "/portfolio/?stage=atGate",
    "/portfolio/?stage=Design",
    "/portfolio/export/?format=csv",
    "/api/v1/portfolio?stage=atGate",
]


def test_the_stage_columns_do_not_grow_with_the_projects(admin, user):
    _staged(range(3), user)
    # Read once as at 30 below: the rows derived and the reader's summaries stored.
    assert len(rows(admin)) == 3
    small = {url: _count(admin, url) for url in URLS}
    _staged(range(3, 30), user)
    assert len(rows(admin)) == 30
    assert {url: _count(admin, url) for url in URLS} == small
