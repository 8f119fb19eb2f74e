"""Stage gates (docs/product.md, "Stage gates"): the site's default stage set, a project's
ordered stages with the work packages each holds and its stage tolerances, the criteria each
stage names from the catalogue (`gates.criteria`), and the gate reviews the sponsor decides.
Nothing here is ticked by hand: a criterion is met or not from the project's data, computed
when read."""

import uuid

from django.db import models

from governance.models import Project, as_choices

NAME_MAX = 120
TEXT_MAX = 2000
STAGE_STATES = ["Planned", "Current", "Done", "Stopped"]
CRITERION_KINDS = ["entry", "exit"]
REVIEW_STATES = ["Requested", "Decided"]
OUTCOMES = ["Go", "Hold", "Recycle", "Stop"]


class DefaultStage(models.Model):
    """One stage of the site's default stage set, offered to every new stage plan in
    `position` order (administered in the Django admin)."""

    name = models.CharField(max_length=NAME_MAX)
    position = models.PositiveSmallIntegerField(unique=True)

    class Meta:
        ordering = ["position"]

    def __str__(self) -> str:
        return self.name


class Stage(models.Model):
    """A stage of a project's plan. `position` orders the stages (1 first). The stage
    tolerances (days late, cost percent over) sit beneath the business case's tolerances.
    `state`: Planned, Current (the one stage under way), Done (a Go passed it), Stopped (the
    project was stopped at its gate)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="stages")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=NAME_MAX)
    planned_start = models.DateField(null=True, blank=True)
    planned_end = models.DateField(null=True, blank=True)
    tolerance_days = models.PositiveIntegerField(null=True, blank=True)
    tolerance_cost_percent = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True
    )
    state = models.CharField(max_length=10, choices=as_choices(STAGE_STATES), default="Planned")
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["project", "position"]
        constraints = [
            models.UniqueConstraint(fields=["project", "position"], name="stage_position_unique"),
            models.UniqueConstraint(
                fields=["project"],
                condition=models.Q(state="Current"),
                name="stage_one_current",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class StagePlan(models.Model):
    """The revision of a project's stage plan as a whole: every save of the plan counts one, and
    a save based on an older plan is refused (412), so a stage another person added is never
    removed by a form opened before it was."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="stage_plan"
    )
    revision = models.PositiveIntegerField(default=1)

    def __str__(self) -> str:
        return f"Stage plan of {self.project_id} (revision {self.revision})"


class StagePackage(models.Model):
    """A work package held by a stage: each package sits in at most one stage."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="holdings")
    work_package = models.OneToOneField(
        "registers.WorkPackage", on_delete=models.CASCADE, related_name="stage_holding"
    )

    def __str__(self) -> str:
        return f"{self.stage_id}: {self.work_package_id}"


class StageCriterion(models.Model):
    """A criterion of the catalogue (`key`, gates.criteria.CATALOGUE) that a stage names for
    its entry or exit, with its parameter where the criterion has one. Site defaults are
    named when the plan is made; the lead adds others (`added_by_account_id`) or dismisses
    one with a reason (who and when recorded): a dismissed criterion is shown, not judged."""

    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="criteria")
    key = models.CharField(max_length=64)
    kind = models.CharField(max_length=5, choices=as_choices(CRITERION_KINDS), default="exit")
    parameter = models.JSONField(null=True, blank=True)
    added_by_account_id = models.CharField(max_length=128, blank=True, default="")
    added_at = models.DateTimeField(null=True, blank=True)
    dismissed_at = models.DateTimeField(null=True, blank=True)
    dismissed_by_account_id = models.CharField(max_length=128, blank=True, default="")
    dismissal_reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["stage", "kind", "id"]
        constraints = [
            models.UniqueConstraint(fields=["stage", "key", "kind"], name="stage_criterion_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.kind})"


class GateReview(models.Model):
    """A gate review of a stage: requested by the lead (the end-stage report generated from
    the model and stored as generated), decided by the sponsor (Go, Hold with a date to come
    back, Recycle, Stop). `unmet_named` lists the unmet criteria the sponsor went through
    with ([{key, kind, reason}]); `decision` is the made entry of the decision log the
    decision wrote. At most one undecided review per stage."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="reviews")
    state = models.CharField(max_length=10, choices=as_choices(REVIEW_STATES), default="Requested")
    requested_at = models.DateTimeField()
    requested_by_account_id = models.CharField(max_length=128)
    report = models.JSONField(default=dict)
    outcome = models.CharField(max_length=8, choices=as_choices(OUTCOMES), blank=True, default="")
    hold_until = models.DateField(null=True, blank=True)
    comment = models.TextField(blank=True, default="")
    unmet_named = models.JSONField(default=list, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by_account_id = models.CharField(max_length=128, blank=True, default="")
    decision = models.ForeignKey(
        "registers.Decision",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="gate_reviews",
    )
    minutes_ref = models.JSONField(null=True, blank=True)
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-requested_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["stage"],
                condition=models.Q(state="Requested"),
                name="gate_review_one_undecided",
            )
        ]

    def __str__(self) -> str:
        return f"{self.stage_id}: {self.outcome or self.state}"
