"""The minutes form records once: sent twice with its one-time token (a double click, a
resend), one meeting is recorded, and one wiki page made from the template."""

import re

from registers.models import SteeringMinutes

PAGE = "/projects/ALPHA/charter/minutes/"


def test_the_minutes_form_sent_twice_records_once(cast, arrange, client_for):
    arrange("Approved", steering_committee=[{"id": "m", "accountId": cast.sponsor.account_id,
                                              "displayName": "S", "role": "Chair"}])  # fmt: skip
    client = client_for(cast.lead)
    html = client.get(PAGE).content.decode()
    token = re.search(r'name="form_token" value="([^"]+)"', html).group(1)
    data = {"title": "Steerco 1", "heldOn": "2026-01-15", "source": "template",
            "attendees": [cast.sponsor.account_id], "form_token": token}  # fmt: skip
    assert client.post(PAGE, data).status_code == 302
    again = client.post(PAGE, data, follow=True)
    assert again.status_code == 200
    assert "recorded once" in again.content.decode()
    assert SteeringMinutes.objects.count() == 1
    # A fresh form records the next meeting.
    html = client.get(PAGE).content.decode()
    fresh = re.search(r'name="form_token" value="([^"]+)"', html).group(1)
    assert fresh != token
    next_meeting = {**data, "title": "Steerco 2", "heldOn": "2026-02-15", "form_token": fresh}
    assert client.post(PAGE, next_meeting).status_code == 302
    assert SteeringMinutes.objects.count() == 2
