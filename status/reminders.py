"""The notifications nobody's action triggers: a status going stale (to the project's lead)
and the weekly digest of "Waiting for me" (to each person with something waiting). Run by
`manage.py runperiodic` (status/periodic.py; or at once by `manage.py send_reminders`). Each is
keyed by its event, so running it again the same day or week tells nobody twice."""

import datetime as dt

from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from charter.selectors import waiting_for
from governance import notifications
from governance.models import User
from status.derive import next_update_due
from status.models import ProjectStatus

# A status is "going stale" from a day before its next update is due.
WARN_BEFORE = dt.timedelta(days=1)
# Projects that still report status.
REPORTING = {"Exploring", "Draft", "Submitted", "Approved", "ClosingSubmitted"}


def stale_status_reminders(now: dt.datetime | None = None) -> int:
    now = now or timezone.now()
    sent = 0
    for status in ProjectStatus.objects.select_related("project").filter(
        project__approval_status__in=REPORTING
    ):
        project = status.project
        due = next_update_due(status)
        if due is not None and now < due - WARN_BEFORE:
            continue
        if due is None:
            when = "has never been reported"
        elif now > due:
            when = f"was due on {timezone.localtime(due):%d %b %Y} and is stale"
        else:
            when = f"is due by {timezone.localtime(due):%d %b %Y %H:%M}"
        episode = status.last_updated_at.isoformat() if status.last_updated_at else "never"
        if notifications.notify(
            kind="status_stale",
            recipient_account_id=project.lead_account_id,
            dedupe_key=f"status_stale:{project.key}:{episode}",
            subject=f"{project.key}: the project status is going stale",
            body=f"The status of {project.name} ({project.key}) {when}. Update it.",
            url=reverse("status:index", args=[project.key]),
            project_key=project.key,
        ):
            sent += 1
    return sent


def weekly_digests(now: dt.datetime | None = None) -> int:
    now = now or timezone.now()
    year, week, _ = timezone.localtime(now).isocalendar()
    sent = 0
    for user in User.objects.filter(is_active=True).exclude(account_id=""):
        if notifications.opted_out(user.account_id, "weekly_digest"):
            continue
        request = HttpRequest()  # stands for the person: whose decisions are awaited
        request.user = user
        found = waiting_for(request)
        lines = [f"- {a.project.key}: {a.what}" for a in found["cases"]]
        lines += [
            f"- {c.project.key}: decide the change request “{c.summary}”" for c in found["changes"]
        ]
        if not lines:
            continue
        count = len(lines)
        if notifications.notify(
            kind="weekly_digest",
            recipient_account_id=user.account_id,
            dedupe_key=f"weekly_digest:{user.account_id}:{year}-W{week:02d}",
            subject=f"Waiting for you: {count} item{'s' if count != 1 else ''}",
            body="Waiting for your decision or acknowledgement:\n" + "\n".join(lines),
            url=reverse("waiting-for-me"),
        ):
            sent += 1
    return sent
