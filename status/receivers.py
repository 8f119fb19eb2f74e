"""Receivers of the kernel signals the business-case services send inside their transaction:
approval starts initiation, the first steering committee held completes it; the realisation
page asks when the next benefit review is due."""

from django.utils import timezone

from governance.models import SiteSettings
from status import derive, services
from status.models import ProjectStatus


def on_charter_approved(sender, *, project, at, **kwargs) -> None:
    services.status_initiation_start(project=project, at=at)


def on_initiation_completed(sender, *, project, at, **kwargs) -> None:
    services.status_initiation_complete(project=project, at=at)


def on_realisation_review_requested(sender, *, project, case, **kwargs) -> dict:
    status = ProjectStatus.objects.filter(project=project).first() or ProjectStatus(project=project)
    return derive.review_due(
        status,
        case,
        case.approval_status if case is not None else "",
        SiteSettings.load().br_cadence_default,
        timezone.localdate(),
    )
