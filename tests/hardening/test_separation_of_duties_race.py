"""Naming victor sponsor and nominating him editor, sent together, leave him one of the two:
both services check the one rule (`permissions.sponsor_clash`) under the project row lock.
Needs PostgreSQL: two real connections wait on the lock (SQLite's whole-database write lock
makes the race impossible there anyway)."""

import json
import threading
import time

import pytest
from django.db import connection, transaction
from django.test import Client

from charter.models import BusinessCase
from governance.models import EditorNomination, Project
from tests.charter.conftest import complete_inputs

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks need PostgreSQL"
)

BASE = "/api/v1/projects/ALPHA"


def _waiting_on_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_sponsor_and_editor_sent_together_leave_victor_only_one(cast, bearer):
    from charter.services import sync_mirror

    victor = cast.viewer
    values = {**complete_inputs(cast), "approval_status": "Draft", "decision_authority": None}
    case = BusinessCase.objects.create(project=cast.project, **values)
    sync_mirror(cast.project, case)
    lead = bearer(cast.lead)
    requests = {
        "charter": ("PATCH", "/charter", {"decisionAuthority": {"accountId": victor.account_id}}),
        "editors": ("PUT", "/editors", {"accountIds": [victor.account_id]}),
    }
    answers: dict = {}

    def send(name):
        method, path, body = requests[name]
        try:
            response = Client().generic(
                method, BASE + path, json.dumps(body), content_type="application/json", **lead
            )
            answers[name] = (response.status_code, response.json())
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(name,)) for name in requests]
    # A third connection holds the project row until both requests wait for it: each has
    # passed every check it makes before locking, as when they arrive at the same moment.
    with transaction.atomic():
        Project.objects.select_for_update().get(pk=cast.project.pk)
        for thread in threads:
            thread.start()
        while _waiting_on_a_lock() < 2 and all(t.is_alive() for t in threads):
            time.sleep(0.01)
    for thread in threads:
        thread.join()

    codes = sorted(code for code, _ in answers.values())
    assert codes == [200, 422], answers
    sponsor = BusinessCase.objects.get().decision_authority
    is_sponsor = bool(sponsor) and sponsor.get("accountId") == victor.account_id
    is_editor = EditorNomination.objects.filter(
        project=cast.project, account_id=victor.account_id
    ).exists()
    assert is_sponsor != is_editor
    refused = next(body for code, body in answers.values() if code == 422)
    message = json.dumps(refused["error"]["fields"])
    assert "nobody approves their own work" in message
