"""The status app's scheduled jobs (run by `manage.py runperiodic`, governance.periodic)."""

import datetime as dt

from governance.periodic import register
from status import exceptions, reminders

register("stale_status_reminders", every=dt.timedelta(days=1))(reminders.stale_status_reminders)
register("weekly_digests", every=dt.timedelta(weeks=1))(reminders.weekly_digests)
register("exception_check", every=dt.timedelta(days=1))(exceptions.check_all)
