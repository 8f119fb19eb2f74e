"""Notifications: a submitted case tells its sponsor, a routed change its approver, a status
going stale its lead, and a weekly digest what waits for each person; in the app and by
e-mail through the outbox, never twice; each person can turn each kind off."""

import datetime as dt
import json

import pytest
from django.core import mail
from django.core.management import call_command
from django.utils import timezone

from governance import notifications, outbox
from governance.models import Notification, OutboundTask
from governance.permissions import caller_for
from registers import services as register_services
from status.models import ProjectStatus
from status.reminders import stale_status_reminders, weekly_digests
from tests.factories import ChangeRequestFactory


@pytest.fixture(autouse=True)
def addresses(cast):
    for user in (cast.lead, cast.sponsor, cast.editor, cast.viewer):
        user.email = f"{user.username}@example.com"
        user.save(update_fields=["email"])


def submit(client, headers):
    return client.post(
        "/api/v1/projects/ALPHA/charter/submit",
        data=json.dumps({}),
        content_type="application/json",
        **headers,
    )


def test_submitted_case_tells_its_sponsor_once(
    cast, arrange, client, bearer, django_capture_on_commit_callbacks
):
    arrange("Draft")
    with django_capture_on_commit_callbacks(execute=True):
        assert submit(client, bearer(cast.lead)).status_code == 200
    note = Notification.objects.get(kind="case_submitted")
    assert note.recipient_account_id == cast.sponsor.account_id
    assert note.url == "/projects/ALPHA/charter/"
    assert [m.to for m in mail.outbox] == [["sponsor@example.com"]]
    assert "submitted for your approval" in mail.outbox[0].subject
    assert "http://" in mail.outbox[0].body and "/projects/ALPHA/charter/" in mail.outbox[0].body
    note.refresh_from_db()
    assert note.emailed_at is not None
    # The e-mail task run again (a retry, a second worker) sends nothing more.
    task = OutboundTask.objects.get(name=notifications.EMAIL_TASK)
    notifications.send_notification_email(task.payload)
    assert len(mail.outbox) == 1


def test_the_same_event_never_notifies_twice(cast, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(2):
            notifications.notify(
                kind="status_stale",
                recipient_account_id=cast.lead.account_id,
                dedupe_key="status_stale:ALPHA:x",
                subject="Stale",
            )
    assert Notification.objects.count() == 1
    assert len(mail.outbox) == 1


def test_routed_change_tells_its_approver(cast, django_capture_on_commit_callbacks):
    caller = caller_for(cast.lead, cast.project)
    with django_capture_on_commit_callbacks(execute=True):
        change = register_services.change_create(
            caller=caller,
            data={
                "summary": "Add SSO",
                "reason": "Customers ask",
                "dimensions": ["Scope"],
                "approverAccountId": cast.viewer.account_id,
            },
        )
    note = Notification.objects.get(kind="change_routed")
    assert note.recipient_account_id == cast.viewer.account_id
    assert note.url.endswith(f"/registers/changes/{change.pk}/")
    assert mail.outbox[0].to == ["viewer@example.com"]
    # Edited without a new approver: nobody is told again. Re-routed: the new approver is.
    with django_capture_on_commit_callbacks(execute=True):
        register_services.change_update(
            caller=caller_for(cast.lead, cast.project),
            change_id=change.pk,
            data={"summary": "Add single sign-on"},
        )
        register_services.change_update(
            caller=caller_for(cast.lead, cast.project),
            change_id=change.pk,
            data={"approverAccountId": cast.sponsor.account_id},
        )
    assert sorted(Notification.objects.values_list("recipient_account_id", flat=True)) == sorted(
        [cast.viewer.account_id, cast.sponsor.account_id]
    )
    assert len(mail.outbox) == 2


def test_a_person_turns_a_kind_off(cast, django_capture_on_commit_callbacks):
    notifications.set_opt_outs(cast.viewer.account_id, {"change_routed"})
    with django_capture_on_commit_callbacks(execute=True):
        register_services.change_create(
            caller=caller_for(cast.lead, cast.project),
            data={
                "summary": "X",
                "dimensions": ["Scope"],
                "approverAccountId": cast.viewer.account_id,
            },
        )
    assert not Notification.objects.exists() and mail.outbox == []


def test_stale_status_tells_the_lead_once(cast, django_capture_on_commit_callbacks):
    ProjectStatus.objects.update_or_create(
        project=cast.project,
        defaults={
            "reporting_cadence": "Weekly",
            "last_updated_at": timezone.now() - dt.timedelta(days=10),
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert stale_status_reminders() == 1
        assert stale_status_reminders() == 0
    note = Notification.objects.get(kind="status_stale")
    assert note.recipient_account_id == cast.lead.account_id
    assert "stale" in note.body
    assert [m.to for m in mail.outbox] == [["lead@example.com"]]


def test_weekly_digest_of_waiting_for_me(cast, django_capture_on_commit_callbacks):
    ChangeRequestFactory(project=cast.project, summary="Extend the pilot")  # the sponsor decides
    with django_capture_on_commit_callbacks(execute=True):
        call_command("send_reminders", stdout=open("/dev/null", "w"))  # noqa: SIM115
        assert weekly_digests() == 0  # the same week: nobody twice
    digest = Notification.objects.get(kind="weekly_digest")
    assert digest.recipient_account_id == cast.sponsor.account_id
    assert "Extend the pilot" in digest.body
    assert any(m.to == ["sponsor@example.com"] for m in mail.outbox)


def test_failed_email_is_retried_by_the_outbox(cast, settings, monkeypatch):
    settings.OUTBOX_RUN_ON_COMMIT = False
    note = notifications.notify(
        kind="status_stale",
        recipient_account_id=cast.lead.account_id,
        dedupe_key="k",
        subject="Stale",
    )

    def broken(*args, **kwargs):
        raise OSError("mail server down")

    monkeypatch.setattr(notifications, "send_mail", broken)
    task = OutboundTask.objects.get()
    assert outbox.run_task(task.pk) is False
    assert Notification.objects.get(pk=note.pk).emailed_at is None
    monkeypatch.undo()
    OutboundTask.objects.filter(pk=task.pk).update(run_after=timezone.now())
    assert outbox.run_task(task.pk) is True
    assert len(mail.outbox) == 1


def test_in_app_list_marks_read_and_saves_settings(cast, client_for):
    notifications.notify(
        kind="case_submitted",
        recipient_account_id=cast.sponsor.account_id,
        dedupe_key="a",
        subject="ALPHA: business case submitted for your approval",
        url="/projects/ALPHA/charter/",
    )
    client = client_for(cast.sponsor)
    html = client.get("/notifications/").content.decode()
    assert "ALPHA: business case submitted for your approval" in html
    assert '1<span class="visually-hidden"> unread</span>' in html
    client.post("/notifications/")
    assert Notification.objects.get().read_at is not None
    client.post("/notifications/settings/", {"kinds": ["case_submitted", "weekly_digest"]})
    assert notifications.opted_out(cast.sponsor.account_id, "change_routed")
    assert not notifications.opted_out(cast.sponsor.account_id, "case_submitted")
    html = client.get("/notifications/").content.decode()
    assert 'value="change_routed">' in html and 'value="case_submitted" checked>' in html


def test_the_unread_count_is_the_persons_unread_notifications(cast, django_assert_num_queries):
    def note(n, account_id, read=False):
        Notification.objects.create(
            dedupe_key=f"count-{n}",
            recipient_account_id=account_id,
            kind="status_stale",
            subject="Status",
            read_at=timezone.now() if read else None,
        )

    for n in range(3):
        note(n, cast.lead.account_id)
    note(3, cast.lead.account_id, read=True)
    note(4, cast.sponsor.account_id)
    with django_assert_num_queries(1):
        assert notifications.unread_count(cast.lead.account_id) == 3
    assert notifications.unread_count(cast.sponsor.account_id) == 1
    assert notifications.unread_count(cast.viewer.account_id) == 0
    assert notifications.unread_count("x' OR '1'='1") == 0
