"""Project status (one per project, the spec's fields and defaults) and status reports
(a draft, then an immutable published snapshot). Model field names are the spec's camelCase
names in snake_case; `revision` is the optimistic-concurrency counter."""

import uuid
from typing import Any

from django.db import models

from governance.models import (
    BR_CADENCES,
    RAG_CHOICES,
    MoneyField,
    Project,
    as_choices,
    summaries_changed,
)

REPORTING_CADENCES = ["Daily", "Weekly", "Monthly"]
CONFIDENCES = ["High", "Modest", "Low", "Unknown"]
# The spec's constant: the one-line reasons are clamped to this many characters on save.
STATUS_REASON_MAX = 120
PHASE_MAX = 200
TEXT_MAX = 2000
REPORT_TITLE_MAX = 200
REPORT_STATES = ["Draft", "Published"]
DIMENSIONS = ["cost", "schedule", "scope", "risk"]


class ProjectStatus(models.Model):
    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="project_status"
    )
    overall_rag = models.CharField(max_length=8, choices=as_choices(RAG_CHOICES), default="None")
    phase = models.CharField(max_length=PHASE_MAX, default="Initiation")
    reporting_cadence = models.CharField(
        max_length=8, choices=as_choices(REPORTING_CADENCES), default="Monthly"
    )
    structured_commentary = models.JSONField(null=True, blank=True)
    project_metrics = models.JSONField(null=True, blank=True)
    cost_rag_override = models.CharField(max_length=8, null=True, blank=True)
    schedule_rag_override = models.CharField(max_length=8, null=True, blank=True)
    scope_rag_override = models.CharField(max_length=8, null=True, blank=True)
    risk_rag_override = models.CharField(max_length=8, null=True, blank=True)
    cost_rag_override_reason = models.CharField(
        max_length=STATUS_REASON_MAX, blank=True, default=""
    )
    schedule_rag_override_reason = models.CharField(
        max_length=STATUS_REASON_MAX, blank=True, default=""
    )
    scope_rag_override_reason = models.CharField(
        max_length=STATUS_REASON_MAX, blank=True, default=""
    )
    outcome_confidence = models.CharField(max_length=8, null=True, blank=True)
    adoption_confidence = models.CharField(max_length=8, null=True, blank=True)
    revised_forecast = MoneyField(null=True, blank=True)
    pm_key_message = models.TextField(blank=True, default="")
    overall_reason = models.CharField(max_length=STATUS_REASON_MAX, blank=True, default="")
    confidence_reason = models.CharField(max_length=STATUS_REASON_MAX, blank=True, default="")
    last_updated_at = models.DateTimeField(null=True, blank=True)
    last_updated_by_account_id = models.CharField(max_length=128, blank=True, default="")
    initiation_started_at = models.DateTimeField(null=True, blank=True)
    initiation_completed_at = models.DateTimeField(null=True, blank=True)
    initiation_dismissals = models.JSONField(default=dict, blank=True)
    br_cadence = models.CharField(
        max_length=10, choices=as_choices(BR_CADENCES), null=True, blank=True
    )
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        verbose_name = "project status"
        verbose_name_plural = "project statuses"

    def __str__(self) -> str:
        return f"Status of {self.project.key}"


class ProjectHealthQuerySet(models.QuerySet["ProjectHealth"]):
    """The stored health rows. A delete raises the stored summaries' revision
    (`governance.summaries`: they read these rows) once, and keeps Django's fast delete, which a
    delete signal would turn into reading and signalling every row."""

    def delete(self) -> tuple[int, dict[str, int]]:
        # In the caller's transaction: the rows gone and the revision raised, or neither.
        deleted = super().delete()
        if deleted[0]:
            summaries_changed()
        return deleted

    # As Django's own: never on the manager (no whole table by accident), never in a template.
    delete.alters_data = True  # type: ignore[attr-defined]
    delete.queryset_only = True  # type: ignore[attr-defined]


class ProjectHealth(models.Model):
    """What `status.derive` makes of one project, stored for the portfolio: the effective and
    derived RAG of each dimension, the portfolio's figures and the drivers' summaries (`row`,
    in the API's shape). Rewritten in the transaction of every change of the facts it reads
    (status.receivers); valid from `computed_at` until `valid_until`, the first moment a
    time-dependent rule (staleness, the scope wait, a date passing) may change it, never beyond
    the end of `as_of`; `basis` fingerprints the thresholds and rules it was derived under. A
    row that is missing, expired or of another basis is derived again when read."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="health"
    )
    as_of = models.DateField()
    computed_at = models.DateTimeField()
    valid_until = models.DateTimeField()
    basis = models.CharField(max_length=64)
    # The fingerprint of the project's facts it was derived from (`status.health.inputs_of`):
    # the periodic job derives again only the rows whose inputs moved since.
    inputs = models.CharField(max_length=64, blank=True, default="")
    cost_rag = models.CharField(max_length=8)
    schedule_rag = models.CharField(max_length=8)
    scope_rag = models.CharField(max_length=8)
    risk_rag = models.CharField(max_length=8)
    derived_cost_rag = models.CharField(max_length=8)
    derived_schedule_rag = models.CharField(max_length=8)
    derived_scope_rag = models.CharField(max_length=8)
    derived_risk_rag = models.CharField(max_length=8)
    stale = models.BooleanField()
    row = models.JSONField()
    # Open risks per cell of the inherent and the residual matrix, for the portfolio's
    # matrices: {"inherent": [impact, likelihood, count, ...], "residual": [...]} (flat).
    risk_cells = models.JSONField(default=dict)
    # The members of `row` the portfolio's summary, heat grid, theme subtotals, earned value
    # and bubble chart add up, each in a small typed column of its own, copied from `row` by
    # the one write of it (`status.health.summary_columns`): aggregate SQL reads these, never
    # the JSON, whose every member read unpacks the whole compressed row again.
    theme = models.CharField(max_length=200, blank=True, default="")
    overall_rag = models.CharField(max_length=8, default="None")
    approved_budget = models.DecimalField(max_digits=30, decimal_places=6, null=True)
    estimate_at_completion = models.DecimalField(max_digits=30, decimal_places=6, null=True)
    cost_overrun_pct = models.FloatField(null=True)
    schedule_slip_days = models.IntegerField(null=True)
    top_risk_score = models.IntegerField(null=True)
    pending_decisions = models.IntegerField(null=True)
    changes_awaiting_application = models.IntegerField(null=True)
    adoption_gap = models.BooleanField(null=True)
    realisation_review_due_on = models.DateField(null=True)
    realisation_review_overdue = models.BooleanField(null=True)
    # The project's earned value (`row["earnedValue"]`): BAC, PV, EV and AC.
    ev_bac = models.DecimalField(max_digits=30, decimal_places=6, null=True)
    ev_pv = models.DecimalField(max_digits=30, decimal_places=6, null=True)
    ev_ev = models.DecimalField(max_digits=30, decimal_places=6, null=True)
    ev_ac = models.DecimalField(max_digits=30, decimal_places=6, null=True)

    objects = ProjectHealthQuerySet.as_manager()

    class Meta:
        verbose_name = "project health"
        verbose_name_plural = "project health"

    def __str__(self) -> str:
        return f"Health of project {self.project_id} as of {self.as_of}"


class PublishedReportChanged(TypeError):
    """A published status report is an immutable snapshot."""


class StatusReportQuerySet(models.QuerySet["StatusReport"]):
    def update(self, **kwargs: Any) -> int:
        if self.filter(state="Published").exists():
            raise PublishedReportChanged("A published status report cannot be changed.")
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        if self.filter(state="Published").exists():
            raise PublishedReportChanged("A published status report cannot be deleted.")
        return super().delete()


class StatusReport(models.Model):
    """A status report: drafted by an editor, then published. Publishing freezes `snapshot`
    (the status, its derived values and drivers, the key messages, who and when); a published
    report is never changed or deleted again."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="status_reports")
    title = models.CharField(max_length=REPORT_TITLE_MAX)
    key_messages = models.TextField(blank=True, default="")
    state = models.CharField(max_length=10, choices=as_choices(REPORT_STATES), default="Draft")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)
    published_at = models.DateTimeField(null=True, blank=True)
    published_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    snapshot = models.JSONField(null=True, blank=True)
    revision = models.PositiveIntegerField(default=1)

    objects = StatusReportQuerySet.as_manager()

    class Meta:
        ordering = ["-published_at", "-created_at"]
        indexes = [models.Index(fields=["project", "state", "-published_at"], name="report_hist")]
        constraints = [
            models.UniqueConstraint(
                fields=["project"],
                condition=models.Q(state="Draft"),
                name="one_draft_report_per_project",
            )
        ]

    def __str__(self) -> str:
        return f"{self.project.key}: {self.title} ({self.state})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if (
            not self._state.adding
            and StatusReport.objects.filter(pk=self.pk, state="Published").exists()
        ):
            raise PublishedReportChanged("A published status report cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        if StatusReport.objects.filter(pk=self.pk, state="Published").exists():
            raise PublishedReportChanged("A published status report cannot be deleted.")
        return super().delete(*args, **kwargs)


EXCEPTION_STATES = ["Open", "Reported", "Decided", "Settled"]
# The undecided states: at most one exception of a project is in one of them.
UNDECIDED_STATES = ["Open", "Reported"]
EXCEPTION_DECISIONS = ["AcceptPlan", "Kill"]
# The business-case acts that end delivery and so settle an undecided exception (the name of
# the act in charter.acts.ACTS).
SETTLING_ACTS = ["kill", "archive", "close"]


class ProjectException(models.Model):
    """A project beyond its tolerances (management by exception): opened once when a derived
    figure first crosses a tolerance the sponsor set, answered by the lead's exception report,
    closed by the sponsor's decision (accept the exception plan, or kill the project: Decided)
    or by an act of the business case that ends delivery (Kill, Archive or Close, taken on the
    business case itself: Settled, `settled_by_act` naming it).
    `crossed` is what was crossed when it opened ([{tolerance, figure, limit, summary}]);
    `within` whether the figures are back within every tolerance now; `events` the record of
    its life ([{at, kind, text}]): going back within tolerance and out again are recorded, never
    silently closing it. At most one undecided exception per project."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="exceptions")
    opened_at = models.DateTimeField()
    crossed = models.JSONField(default=list)
    state = models.CharField(max_length=10, choices=as_choices(EXCEPTION_STATES), default="Open")
    within = models.BooleanField(default=False)
    events = models.JSONField(default=list)
    cause = models.TextField(blank=True, default="")
    consequences = models.TextField(blank=True, default="")
    options = models.JSONField(default=list)
    recommendation = models.TextField(blank=True, default="")
    plan_budget = MoneyField(null=True, blank=True)
    plan_schedule_days = models.IntegerField(null=True, blank=True)
    reported_at = models.DateTimeField(null=True, blank=True)
    reported_by_account_id = models.CharField(max_length=128, blank=True, default="")
    decision = models.CharField(
        max_length=10, choices=as_choices(EXCEPTION_DECISIONS), blank=True, default=""
    )
    decision_comment = models.TextField(blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by_account_id = models.CharField(max_length=128, blank=True, default="")
    settled_by_act = models.CharField(
        max_length=16, choices=as_choices(SETTLING_ACTS), blank=True, default=""
    )
    settled_at = models.DateTimeField(null=True, blank=True)
    settled_by_account_id = models.CharField(max_length=128, blank=True, default="")
    change_request = models.ForeignKey(
        "registers.ChangeRequest",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["project", "-opened_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project"],
                condition=models.Q(state__in=UNDECIDED_STATES),
                name="one_undecided_exception",
            )
        ]

    def __str__(self) -> str:
        return f"Exception of {self.project_id} opened {self.opened_at:%Y-%m-%d} ({self.state})"
