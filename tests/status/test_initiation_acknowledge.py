"""Initiation is acknowledged as complete only once it has started (the business case is
approved): one rule in one service, the same refusal and the same figures on the page and in
the API, and it never completes before it starts."""

from django.utils import timezone

from governance import signals
from governance.models import AuditEntry
from status.models import ProjectStatus
from status.services import INITIATION_NOT_STARTED

API = "/api/v1/projects/ALPHA/status"
PAGE = "/projects/ALPHA/status/"


def test_acknowledging_before_approval_is_refused_alike_on_every_surface(cast, client_for):
    lead = client_for(cast.lead)
    api = lead.post(f"{API}/initiation/acknowledge", data={}, content_type="application/json")
    assert api.status_code == 409
    assert api.json()["error"]["message"] == INITIATION_NOT_STARTED
    page = lead.post(f"{PAGE}initiation/", {"action": "acknowledge"})
    assert page.status_code == 409
    assert INITIATION_NOT_STARTED in page.content.decode()
    html = lead.get(PAGE).content.decode()
    assert "Acknowledge initiation complete" not in html
    assert "Starts when the business case is approved." in html
    status = lead.get(API).json()
    assert status["initiationStartedAt"] is None and status["initiationCompletedAt"] is None
    assert not AuditEntry.objects.filter(kind="status.initiation_completed").exists()


def test_after_approval_acknowledging_completes_initiation_after_it_started(cast, client_for):
    approved = timezone.now()
    signals.charter_approved.send(sender=None, project=cast.project, at=approved)
    lead = client_for(cast.lead)
    assert "Acknowledge initiation complete" in lead.get(PAGE).content.decode()
    response = lead.post(f"{PAGE}initiation/", {"action": "acknowledge"})
    assert response.status_code == 302
    stored = ProjectStatus.objects.get(project=cast.project)
    assert stored.initiation_started_at == approved
    assert stored.initiation_completed_at >= stored.initiation_started_at
    status = lead.get(API).json()
    assert status["initiationCompletedAt"] and status["initiationStartedAt"]
    html = lead.get(PAGE).content.decode()
    assert "Acknowledge initiation complete" not in html and "Completed" in html
    again = lead.post(f"{API}/initiation/acknowledge", data={}, content_type="application/json")
    assert again.status_code == 409 and "already completed" in again.json()["error"]["message"]
