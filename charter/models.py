"""The business case (charter): one per project, with the spec's thesis, adoption, approval,
lifecycle, close-out and realisation fields. Nested spec objects (seats, links, notes,
financial case, close-out, reviews) are JSON; scalar fields are columns so the portfolio can
filter and sort on them. `version` is the spec's charter version; `revision` is the
optimistic-concurrency counter every mutable record carries."""

from django.db import models

from governance.models import MoneyField, Project, as_choices

APPROVAL_STATUSES = [
    "Exploring",
    "Draft",
    "Submitted",
    "Approved",
    "ClosingSubmitted",
    "Closed",
    "Archived",
    "InRealisation",
    "Realised",
    "NotRealised",
    "InMaintenance",
]
CHANGE_SATURATIONS = ["None", "Low", "Modest", "High"]
CONFIDENCES = ["High", "Modest", "Low", "Unknown"]
TERMINAL_DISPOSITIONS = ["archived", "killed"]
RETURN_NOTE_SECTIONS = [
    "businessProblem",
    "outcome",
    "returnExpected",
    "adoption",
    "sponsor",
    "steeringCommittee",
    "theme",
    "general",
]
CLOSEOUT_RETURN_NOTE_SECTIONS = [
    "asBuiltOutcome",
    "asBuiltReturn",
    "scopeDispositions",
    "rioDispositions",
    "lessons",
    "bauHandover",
    "general",
]
SEVERITIES = ["Blocker", "Significant", "Minor"]
FINANCIAL_MODES = ["attached", "builtin", "none"]
SCOPE_DISPOSITIONS = [
    "DeliveredAsChartered",
    "DeliveredReduced",
    "DeliveredExpanded",
    "Dropped",
    "Deferred",
]
RIO_DISPOSITIONS = ["Closed", "TransferredToBau", "Accepted", "Pursued", "Dropped"]
PENDING_DISPOSITIONS = ["Adjudicated", "Withdrawn", "ApprovedAsShipped", "DeferredToBau"]
BAU_HANDOVER_STATES = ["Pending", "Acknowledged", "Escalated"]


class BusinessCase(models.Model):
    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="business_case"
    )

    # Thesis
    business_problem = models.TextField(blank=True, default="")
    outcome = models.TextField(blank=True, default="")
    objectives = models.TextField(blank=True, default="")  # legacy: surfaces as outcome on read
    return_expected = models.TextField(blank=True, default="")
    scope_in_bounds = models.TextField(blank=True, default="")
    scope_boundaries = models.TextField(blank=True, default="")
    theme = models.CharField(max_length=200, blank=True, default="")
    design_principles = models.JSONField(default=list, blank=True)
    supporting_links = models.JSONField(default=list, blank=True)
    decision_authority = models.JSONField(null=True, blank=True)
    project_manager = models.JSONField(null=True, blank=True)
    customer_rep = models.JSONField(null=True, blank=True)
    supplier_rep = models.JSONField(null=True, blank=True)
    steering_committee = models.JSONField(default=list, blank=True)
    # Null until first saved: a never-saved case serves a fresh empty builtin model.
    financial_case = models.JSONField(null=True, blank=True)
    plan_baseline = models.JSONField(null=True, blank=True)

    # Adoption inputs (gated at submission)
    adoption_affected = models.TextField(blank=True, default="")
    adoption_kpi = models.TextField(blank=True, default="")
    adoption_owner = models.JSONField(null=True, blank=True)
    # Stored as given; anything outside the enum reads as Unknown.
    change_saturation = models.CharField(max_length=16, blank=True, default="")

    # Approval and lifecycle
    approval_status = models.CharField(
        max_length=20, choices=as_choices(APPROVAL_STATUSES), default="Exploring", db_index=True
    )
    version = models.PositiveIntegerField(default=1)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # Who submitted the case last: they may not approve, return or kill it (their own work).
    submitted_by_account_id = models.CharField(max_length=128, blank=True, default="")
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    approval_comment = models.TextField(blank=True, default="")
    approval_rationale = models.TextField(blank=True, default="")
    return_notes = models.JSONField(default=list, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    archived_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    archive_reason = models.TextField(blank=True, default="")
    archived_from_status = models.CharField(max_length=20, null=True, blank=True)
    # Null on older records: reads as 'archived'.
    terminal_disposition = models.CharField(max_length=12, null=True, blank=True)
    amendment_enabled_by_change_id = models.CharField(max_length=64, null=True, blank=True)
    amendment_no_change_reason = models.TextField(null=True, blank=True)  # legacy, retired
    # Tolerances the sponsor set at approval (null: none set, the project runs as before):
    # days late against the plan baseline's end, cost over the approved budget (a percentage or
    # an amount), benefits under the approved benefit (a percentage).
    tolerance_days = models.PositiveIntegerField(null=True, blank=True)
    tolerance_cost_percent = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True
    )
    tolerance_cost_amount = MoneyField(null=True, blank=True)
    tolerance_benefit_percent = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True
    )
    first_steerco_scheduled_for = models.DateField(null=True, blank=True)
    first_steerco_held_at = models.DateTimeField(null=True, blank=True)
    first_steerco_attendees = models.JSONField(default=list, blank=True)

    # Close-out
    close_out = models.JSONField(null=True, blank=True)
    closeout_return_notes = models.JSONField(default=list, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by_account_id = models.CharField(max_length=128, null=True, blank=True)

    # Realisation
    return_realised = models.TextField(blank=True, default="")
    realisation_summary = models.TextField(blank=True, default="")
    realisation_lessons = models.TextField(blank=True, default="")
    realisation_confidence = models.CharField(max_length=10, default="Unknown")
    realisation_date = models.DateField(null=True, blank=True)
    kpi_resolution = models.JSONField(null=True, blank=True)
    br_owner = models.CharField(max_length=200, null=True, blank=True)
    realisation_reviews = models.JSONField(default=list, blank=True)
    realisation_started_at = models.DateTimeField(null=True, blank=True)
    realisation_decided_at = models.DateTimeField(null=True, blank=True)
    realisation_decided_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    maintenance_started_at = models.DateTimeField(null=True, blank=True)
    maintenance_retired_at = models.DateTimeField(null=True, blank=True)
    last_realisation_review_at = models.DateTimeField(null=True, blank=True)

    updated_at = models.DateTimeField(null=True, blank=True)
    updated_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    revision = models.PositiveIntegerField(default=1)
    # The submittedAt the best-effort approval nudge was last posted for (keeps the outbox
    # handler idempotent: a retried task does not comment twice).
    approval_nudge_sent_for = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "business case"

    def __str__(self) -> str:
        return f"Business case of {self.project.key} (v{self.version}, {self.approval_status})"


class ApprovedVersion(models.Model):
    """One approved version of a business case, as approved: who, when, why, the enabling
    change of an amendment, the plan baseline and the thesis at that moment. Written only by
    approval; never edited."""

    business_case = models.ForeignKey(
        BusinessCase, on_delete=models.CASCADE, related_name="approved_versions"
    )
    version = models.PositiveIntegerField()
    approved_at = models.DateTimeField()
    approved_by_account_id = models.CharField(max_length=128)
    approval_comment = models.TextField(blank=True, default="")
    approval_rationale = models.TextField(blank=True, default="")
    enabling_change_id = models.CharField(max_length=64, null=True, blank=True)
    plan_baseline = models.JSONField(default=dict, blank=True)
    thesis = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["business_case", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["business_case", "version"], name="approved_version_once"
            )
        ]

    def __str__(self) -> str:
        return f"v{self.version} approved {self.approved_at:%Y-%m-%d}"
