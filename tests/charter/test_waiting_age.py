"""Waiting for me shows how long each item has waited, the oldest first."""

import datetime as dt

from django.utils import timezone

from registers.models import ChangeRequest
from tests.charter.test_waiting import make_project
from tests.factories import ChangeRequestFactory

URL = "/waiting/"


def test_items_show_their_age_oldest_first(cast, client_for):
    now = timezone.now()
    make_project("NEW", cast, "Submitted", submitted_at=now - dt.timedelta(days=2))
    make_project("OLD", cast, "Submitted", submitted_at=now - dt.timedelta(days=20))
    make_project("MID", cast, "Submitted", submitted_at=now - dt.timedelta(days=9))
    sponsored = make_project("SPO", cast, "Approved")
    for summary, days in (("Fresh change", 0), ("Stale change", 30), ("Week-old change", 7)):
        change = ChangeRequestFactory(project=sponsored, summary=summary)
        ChangeRequest.objects.filter(pk=change.pk).update(created_at=now - dt.timedelta(days=days))
    html = client_for(cast.sponsor).get(URL).content.decode()
    cases = [html.index(f'href="/projects/{key}/charter/"') for key in ("OLD", "MID", "NEW")]
    assert cases == sorted(cases)
    changes = [html.index(s) for s in ("Stale change", "Week-old change", "Fresh change")]
    assert changes == sorted(changes)
    for age in ("20 days", "9 days", "2 days", "30 days", "7 days", "today"):
        assert f'<strong class="age">{age}</strong>' in html, age
