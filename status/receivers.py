"""Receivers of the kernel signals the business-case services send inside their transaction:
approval starts initiation, the first steering committee held completes it."""

from status import services


def on_charter_approved(sender, *, project, at, **kwargs) -> None:
    services.status_initiation_start(project=project, at=at)


def on_initiation_completed(sender, *, project, at, **kwargs) -> None:
    services.status_initiation_complete(project=project, at=at)
