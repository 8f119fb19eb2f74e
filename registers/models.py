"""The four registers (work packages, risks and opportunities, decisions, change requests)
and the project's steering minutes, with field names and limits from the spec. Model field
names are the spec's camelCase names in snake_case; every record carries `revision` for
optimistic concurrency."""

import uuid
from typing import Any

from django.db import models
from django.db.models.functions import Lower

from governance.models import RAG_CHOICES, MoneyField, Project, as_choices

WP_STATUSES = ["Not Started", "In Progress", "Blocked", "Complete"]
RISK_STATUSES = ["Open", "Closed"]
RISK_DIRECTIONS = ["Risk", "Opportunity"]
RISK_TREATMENTS = {
    "Risk": ["Mitigate", "Avoid", "Transfer", "Accept"],
    "Opportunity": ["Pursue", "Enhance", "Share", "Ignore"],
}
DECISION_STATES = ["Pending", "Made"]
CHANGE_STATUSES = ["Proposed", "Approved", "Rejected", "Withdrawn"]
CHANGE_DIMENSIONS = ["Scope", "Budget", "Schedule", "Quality", "Other"]
APPLICATION_STATES = ["Proposed", "Rejected", "Withdrawn", "Applied", "AwaitingApplication"]

NAME_MAX = 200
TEXT_MAX = 2000


class RegisterRecord(models.Model):
    """What a record of every register carries: its id, when it was created and last
    changed, and `revision` for optimistic concurrency."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        abstract = True


class ImportableRecord(RegisterRecord):
    """A record a spreadsheet import may create (risks, decisions, change requests), marked
    as imported."""

    imported = models.BooleanField(default=False)

    class Meta:
        abstract = True


class WorkPackage(RegisterRecord):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="work_packages")
    name = models.CharField(max_length=NAME_MAX)
    type = models.CharField(max_length=NAME_MAX, null=True, blank=True)
    owner_account_id = models.CharField(max_length=128, null=True, blank=True)
    planned_start_date = models.DateField(null=True, blank=True)
    planned_end_date = models.DateField(null=True, blank=True)
    actual_start_date = models.DateField(null=True, blank=True)
    actual_end_date = models.DateField(null=True, blank=True)
    forecast_start_date = models.DateField(null=True, blank=True)
    forecast_end_date = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=as_choices(WP_STATUSES), default="Not Started")
    rag = models.CharField(max_length=8, choices=as_choices(RAG_CHOICES), default="None")
    progress = models.PositiveSmallIntegerField(null=True, blank=True)
    budget = MoneyField(null=True, blank=True)
    budget_phasing = models.JSONField(null=True, blank=True)
    # Written only by business-case approval; an ordinary save keeps the stored value.
    budget_baseline = MoneyField(null=True, blank=True)
    budget_forecast = MoneyField(null=True, blank=True)
    budget_actual = MoneyField(null=True, blank=True)
    commentary = models.TextField(null=True, blank=True)
    linked_issue_keys = models.JSONField(default=list, blank=True)
    # Linked issue key -> why the link is broken ("deleted", "moved to KEY"), as the tracker
    # said (webhook); the key stays linked until someone unlinks it.
    broken_issue_keys = models.JSONField(default=dict, blank=True)
    sort_order = models.IntegerField(null=True, blank=True)
    # Legacy stamps: carried forward unedited, never freshly set.
    budget_baseline_locked_at = models.DateTimeField(null=True, blank=True)
    planned_dates_baseline_locked_at = models.DateTimeField(null=True, blank=True)
    updated_by_account_id = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                Lower("name"), "project", name="work_package_name_unique_per_project"
            )
        ]
        # The register's own order (registers.listing.ORDERS), so its first page and each
        # page after a row is a range read of the index, whatever the register's size.
        indexes = [
            models.Index(
                models.F("project"),
                models.F("sort_order"),
                models.F("planned_start_date"),
                Lower("name"),
                models.F("created_at"),
                models.F("id"),
                name="wp_register_order",
            )
        ]

    def __str__(self) -> str:
        return self.name


def _score(impact: str, likelihood: str) -> models.When:
    return models.When(
        **{f"{impact}__gt": 0, f"{likelihood}__gt": 0},
        then=models.F(impact) * models.F(likelihood),
    )


# The risk score, written once: the database computes it (a generated column) and Python and
# SQL read it. residualImpact x residualLikelihood when both are set, else impact x likelihood,
# else null; the same score drives the register's heat colour and the derived risk RAG.
RISK_SCORE = models.Case(
    _score("residual_impact", "residual_likelihood"), _score("impact", "likelihood"), default=None
)
# Before treatment: impact x likelihood, else null (the register shows it beside the score).
INHERENT_SCORE = models.Case(_score("impact", "likelihood"), default=None)


class Risk(ImportableRecord):
    """A risk or an opportunity (user-facing name: Risks)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="risks")
    title = models.CharField(max_length=NAME_MAX)
    description = models.TextField(blank=True, default="")
    owner_account_id = models.CharField(max_length=128, null=True, blank=True)
    status = models.CharField(max_length=8, choices=as_choices(RISK_STATUSES), default="Open")
    direction = models.CharField(max_length=12, choices=as_choices(RISK_DIRECTIONS), default="Risk")
    materialised = models.BooleanField(default=False)
    impact = models.PositiveSmallIntegerField(null=True, blank=True)
    likelihood = models.PositiveSmallIntegerField(null=True, blank=True)
    residual_impact = models.PositiveSmallIntegerField(null=True, blank=True)
    residual_likelihood = models.PositiveSmallIntegerField(null=True, blank=True)
    treatment = models.CharField(max_length=12, null=True, blank=True)
    mitigation = models.TextField(blank=True, default="")
    accepted_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    accepted_at = models.DateTimeField(null=True, blank=True)
    acceptance_rationale = models.TextField(blank=True, default="")
    updated_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    score = models.GeneratedField(
        expression=RISK_SCORE, output_field=models.IntegerField(null=True), db_persist=True
    )
    inherent_score = models.GeneratedField(
        expression=INHERENT_SCORE, output_field=models.IntegerField(null=True), db_persist=True
    )

    GENERATED = ("score", "inherent_score")

    class Meta:
        indexes = [
            models.Index(fields=["project", "status"], name="risk_project_status"),
            # The register's own order (registers.listing.ORDERS): open before closed, newest
            # first.
            models.Index(
                models.F("project"),
                models.Case(
                    models.When(status="Closed", then=1),
                    default=0,
                    output_field=models.IntegerField(),
                ),
                models.F("created_at").desc(),
                models.F("id").desc(),
                name="risk_register_order",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not args:
            # A risk made here, not read: no score until the insert returns it (never a query
            # for an unsaved row's).
            for name in self.GENERATED:
                self.__dict__.setdefault(name, None)

    def save(self, *args: Any, **kwargs: Any) -> None:
        adding = self._state.adding
        super().save(*args, **kwargs)
        if not adding:
            # An insert returns the scores; an update does not (Django 5.2): they are read
            # again when next asked for, never left as they were before the write.
            for name in self.GENERATED:
                self.__dict__.pop(name, None)


class Decision(ImportableRecord):
    """An entry of the append-only decision log (new entries first)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="decisions")
    decision = models.CharField(max_length=NAME_MAX)
    decision_notes = models.TextField(blank=True, default="")
    made_on = models.DateField(null=True, blank=True)
    made_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    recorded_by = models.CharField(max_length=128, null=True, blank=True)
    rationale = models.TextField(blank=True, default="")
    # Legacy, kept readable, never written.
    owner_account_id = models.CharField(max_length=128, null=True, blank=True)
    approver_account_id = models.CharField(max_length=128, null=True, blank=True)
    approver_seat = models.JSONField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    status = models.CharField(max_length=16, default="Proposed")
    minutes_ref = models.JSONField(null=True, blank=True)
    risk_id = models.CharField(max_length=64, null=True, blank=True)
    treated_risk_id = models.CharField(max_length=64, null=True, blank=True, db_index=True)
    evidence_links = models.JSONField(default=list, blank=True)
    notes = models.JSONField(default=list, blank=True)
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        # The register's own order (registers.listing.ORDERS): newest first.
        indexes = [
            models.Index(fields=["project", "-created_at", "-id"], name="decision_register_order")
        ]

    def __str__(self) -> str:
        return self.decision


class ChangeRequest(ImportableRecord):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="changes")
    summary = models.CharField(max_length=NAME_MAX)
    reason = models.TextField(blank=True, default="")
    # The dimensions in force: the person's choice when `dimensions_chosen`, else those the
    # impacts imply, re-inferred on every save (registers.derive.change_dimensions).
    dimensions = models.JSONField(default=list, blank=True)
    dimensions_chosen = models.BooleanField(default=False)
    impact_schedule_days = models.IntegerField(null=True, blank=True)
    impact_budget = MoneyField(null=True, blank=True)
    impact_scope = models.TextField(blank=True, default="")
    impact_quality_other = models.TextField(blank=True, default="")
    impact_timeline = models.TextField(blank=True, default="")  # legacy: nothing reads or writes it
    # The spec's string id of one of the project's work packages (kept if the package goes).
    target_work_package_id = models.UUIDField(null=True, blank=True)
    proposer_account_id = models.CharField(max_length=128, null=True, blank=True)
    approver_account_id = models.CharField(max_length=128, null=True, blank=True)
    approver_seat = models.JSONField(null=True, blank=True)
    # Server-set when the change was raised to enable a business-case amendment: it routes to
    # the sponsor, and no edit may name another approver.
    approver_locked = models.BooleanField(default=False)
    status = models.CharField(
        max_length=12, choices=as_choices(CHANGE_STATUSES), default="Proposed"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by_account_id = models.CharField(max_length=128, null=True, blank=True)
    decision_comment = models.TextField(blank=True, default="")
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")
    # Server-authored {kind: 'charter'|'baseline', ref, at, by}; never taken from a client.
    application_record = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["project", "status"], name="change_project_status"),
            # The register's own order (registers.listing.ORDERS): newest first.
            models.Index(fields=["project", "-created_at", "-id"], name="change_register_order"),
        ]

    def __str__(self) -> str:
        return self.summary


class SteeringMinutes(models.Model):
    """One steering-committee meeting's minutes. Decisions cite them (minutesRef); the first
    minutes recorded complete initiation. Written by the business-case services."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="steering_minutes")
    title = models.CharField(max_length=NAME_MAX)
    url = models.CharField(max_length=2000, blank=True, default="")
    page_id = models.CharField(max_length=64, null=True, blank=True)
    held_on = models.DateField()
    attendees = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-held_on", "-created_at"]
        verbose_name_plural = "steering minutes"

    def __str__(self) -> str:
        return f"{self.held_on}: {self.title}"


# The four registers by their URL segment, in the sub-tab bar's order.
RegisterModel = type[WorkPackage] | type[Risk] | type[Decision] | type[ChangeRequest]
REGISTER_MODELS: dict[str, RegisterModel] = {
    "work-packages": WorkPackage,
    "risks": Risk,
    "decisions": Decision,
    "changes": ChangeRequest,
}


class RegisterSummary(models.Model):
    """What the register pages show of all of a project's rows, stored with the registers
    revision it was read at (`registers.summary`: written in the transaction that raises the
    revision, read only while the revision is the project's)."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    revision = models.PositiveBigIntegerField()
    # Rows per register ({slug: count}), each register's owners ({slug: [accountId]}), the
    # work packages' money sums ({name: decimal text or null}) and their budget-curve groups
    # (registers.pictures.budget_rows, each as a list: phasing, months, sums as text).
    counts = models.JSONField(default=dict)
    owners = models.JSONField(default=dict)
    money = models.JSONField(default=dict)
    budget = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"Register summary of project {self.project_id}"
