"""Rate limits as a real site applies them (item 5 of the Atlassian issue): Atlassian answers
429 with Retry-After and, since 2 March 2026, points per app and per tenant (X-RateLimit-*,
RateLimit-Reason; https://developer.atlassian.com/cloud/jira/platform/rate-limiting/). A web
request never sleeps on it; the outbox worker holds its task until Retry-After has passed."""

import datetime as dt

import pytest
from django.utils import timezone

from governance import outbox
from governance.tracker.local import scripting
from registers.services.common import WRITE_BACK_TASK

pytestmark = pytest.mark.django_db

LIMITED = {
    "Retry-After": "7200",
    "RateLimit-Reason": "jira-quota-tenant-based",
    "X-RateLimit-Limit": "65000",
    "X-RateLimit-Remaining": "0",
}


@pytest.fixture
def limited(cast, fake_jira, settings, sleeps):
    settings.ATLASSIAN_RETRIES = 3
    scripting.ensure_issue("ALPHA-1", summary="Epic 1")
    fake_jira.grant(cast.lead)
    return fake_jira


def test_a_page_answers_at_once_saying_jira_is_busy(limited, cast, client_for, sleeps):
    limited.mock.on("getMyPermissions", (429, {"errorMessages": ["Rate limited"]}, LIMITED))
    page = client_for(cast.lead).get("/projects/ALPHA/")
    assert page.status_code == 503
    assert "Jira is busy" in page.content.decode()
    assert sleeps == []  # before: up to three sleeps of up to 10 s inside the request


def test_the_one_error_mapping_says_busy_for_a_rate_limit_and_down_otherwise(limited, tracker):
    from governance.errors import Unavailable
    from governance.tracker import TrackerError

    limited.mock.on("getProject", (429, {"errorMessages": ["Rate limited"]}, LIMITED))
    with pytest.raises(TrackerError) as busy:
        tracker.get_project("ALPHA")
    assert "busy" in Unavailable.from_tracker(busy.value).body()["error"]["message"]
    assert (
        "not answering" in Unavailable.from_tracker(TrackerError("down")).body()["error"]["message"]
    )


def test_the_worker_holds_the_task_until_retry_after_and_lists_the_limit(
    limited, cast, client_for, settings
):
    limited.mock.on("editIssue", (429, {"errorMessages": ["Rate limited"]}, LIMITED))
    settings.OUTBOX_RUN_ON_COMMIT = False
    task = outbox.enqueue(WRITE_BACK_TASK, {"projectId": cast.project.pk, "issueKey": "ALPHA-1"})
    before = timezone.now()
    assert not outbox.run_task(task.pk)
    task.refresh_from_db()
    assert task.state == "pending"
    assert task.attempts == 0  # a rate limit spends no attempt
    assert task.run_after >= before + dt.timedelta(seconds=7200)  # any length
    assert "RateLimit-Reason jira-quota-tenant-based" in task.last_error
    assert outbox.run_task(task.pk) is False  # not due: nothing is asked
    assert limited.mock.count("editIssue") == 1
    page = client_for(cast.site_admin).get("/outbox/")
    assert "X-RateLimit-Remaining 0" in page.content.decode()
