"""Two workers keeping the 'Work Package' field at once leave one field and one context per
project: the TrackerFieldState row lock serialises them. Needs PostgreSQL (SQLite has no row
locks; its whole-database write lock makes the race impossible there anyway)."""

import threading
import time

import pytest
from django.db import connection

from governance.models import TrackerFieldState
from tests.atlassian.fake_jira import FakeJira
from tests.atlassian.test_jira_backend import field_jira  # noqa: F401  (fixture)

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks need PostgreSQL"
)


@pytest.mark.django_db(transaction=True)
def test_two_workers_create_one_field_and_one_context(tracker, field_jira):  # noqa: F811
    slow_search = field_jira.handlers["getFieldsPaginated"]

    def search(request, query, body):
        answer = slow_search(request, query, body)
        time.sleep(0.3)  # widen the window between "not found" and "create"
        return answer

    field_jira.on("getFieldsPaginated", search)
    errors = []

    def work(key):
        try:
            tracker.set_work_package_field(key, "Build")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(k,)) for k in ("ALPHA-1", "ALPHA-2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert field_jira.count("createCustomField") == 1
    assert field_jira.count("createCustomFieldContext") == 1
    assert field_jira.count("assignProjectsToCustomFieldContext") == 0
    assert TrackerFieldState.objects.get().projects == {"ALPHA": "10001"}
    assert FakeJira  # the stand-in other tests use shares this contract mock
