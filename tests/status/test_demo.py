"""The demo gives every RAG colour on the status pages and the portfolio, and published reports
with a trend; running it twice changes nothing."""

from django.core.management import call_command
from django.test import Client

from charter.models import BusinessCase
from governance.models import AuditEntry, User
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status.models import ProjectStatus, StatusReport

MODELS = [
    ProjectStatus,
    StatusReport,
    WorkPackage,
    Risk,
    ChangeRequest,
    Decision,
    BusinessCase,
    AuditEntry,
]


def test_the_demo_shows_every_colour_and_a_trend_and_is_idempotent(db):
    call_command("seed_demo", stdout=None)
    counts = {model: model.objects.count() for model in MODELS}
    call_command("seed_demo", stdout=None)
    assert {model: model.objects.count() for model in MODELS} == counts

    client = Client()
    client.force_login(User.objects.get(username="priya"))
    rows = client.get("/api/v1/portfolio").json()
    assert len(rows) == 11
    colours = {"Red", "Amber", "Green", "Blue", "None"}
    assert {row["overallRag"] for row in rows} == colours
    effective = {value for row in rows for value in row["effective"].values()}
    assert effective == colours
    derived = {value for row in rows for value in row["derived"].values()}
    assert derived == colours
    assert any(row["stale"] for row in rows)
    assert any(row["realisationReviewOverdue"] for row in rows)
    assert any(row["derived"] != row["effective"] for row in rows)

    published = StatusReport.objects.filter(state="Published")
    assert published.count() >= 5
    apollo = [r.snapshot["status"]["overallRag"] for r in published.filter(project__key="APOLLO")]
    assert len(set(apollo)) > 1  # a trend, not a flat line
    lessons = client.get("/api/v1/portfolio/lessons").json()
    assert {lesson["kind"] for lesson in lessons} == {
        "worked",
        "differently",
        "nextSponsor",
        "realisation",
    }
