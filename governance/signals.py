"""Signals through which a lower layer tells a higher one that something happened, inside the
same transaction (Django signals are synchronous). The charter app sends them; the status app
receives them, so the charter never imports the status app."""

from django.dispatch import Signal

# Sent when a business case is approved. kwargs: project (governance.Project), at (datetime).
# Receiver: project status sets initiationStartedAt when unset.
charter_approved = Signal()

# Sent when initiation completes: the first steering minutes are recorded or the first
# steering committee is confirmed as held. kwargs: project, at (datetime).
# Receiver: project status sets initiationCompletedAt when unset.
initiation_completed = Signal()

# Sent by the realisation page to ask when the next benefit review is due (the status app owns
# the per-project review cadence). kwargs: project, case (the charter's BusinessCase).
# Receiver: project status answers the same dict the status page and the portfolio show
# ({cadence, cadenceSource, dueOn, overdue, ...}), computed by the one function for it.
realisation_review_requested = Signal()
