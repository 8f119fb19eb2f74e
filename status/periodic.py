"""The status app's scheduled jobs (run by `manage.py runperiodic`, governance.periodic)."""

import datetime as dt

from governance.periodic import register
from status import exceptions, health, reminders

register("stale_status_reminders", every=dt.timedelta(days=1))(reminders.stale_status_reminders)
register("weekly_digests", every=dt.timedelta(weeks=1))(reminders.weekly_digests)
register("exception_check", every=dt.timedelta(days=1))(exceptions.check_all)
# The portfolio's stored rows, derived again when their inputs changed or the clock overtook
# them (the same model as every write).
register("health_refresh", every=dt.timedelta(hours=1))(health.refresh_changed)
