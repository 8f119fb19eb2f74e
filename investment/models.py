"""Investment decisions (docs/product.md, "Investment decisions"; docs/decisions/0283): the
scoring model the site governs, in versions; the scores of proposals against a version's
criteria; scenarios (a selection within a budget); the portfolio decision log (made
decisions, immutable); and the "prioritised in scenario X" marker of a business case.

Nothing here is ever rewritten that a reader relied on: a new model is a new version with its
own criteria, a rescore is a new score row that supersedes the old one, a made portfolio
decision refuses every save and delete."""

import uuid
from typing import Any

from django.db import models

from charter.models import BusinessCase
from governance.errors import Conflict
from governance.models import MoneyField, Project

NAME_MAX = 200
TEXT_MAX = 2000
POINTS = 5  # every criterion is scored 1 to 5, with words for each point
PERSON = "person"


class ModelVersion(models.Model):
    """One version of the scoring model: its criteria hang off it and never change; the
    highest number is the model in force."""

    number = models.PositiveIntegerField(unique=True)
    why = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"scoring model version {self.number}"


class Criterion(models.Model):
    """A criterion of one model version: a name, what it measures, the words for each of the
    five points, a weight, and its source: a person (who gives a reason) or a data source
    key of the catalogue (`investment.criteria.CATALOGUE`) with the four thresholds that map
    its figure to points."""

    version = models.ForeignKey(ModelVersion, on_delete=models.PROTECT, related_name="criteria")
    key = models.CharField(max_length=64)
    name = models.CharField(max_length=NAME_MAX)
    measures = models.TextField(blank=True, default="")
    points = models.JSONField(default=list)
    weight = models.PositiveIntegerField()
    source = models.CharField(max_length=32, default=PERSON)
    thresholds = models.JSONField(null=True, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["version", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="criterion_key_per_version")
        ]

    def __str__(self) -> str:
        return self.name


class Score(models.Model):
    """One person's score of a proposal against a criterion, with the reason. Never updated
    but to mark it superseded by the rescore that replaced it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="investment_scores")
    version = models.ForeignKey(ModelVersion, on_delete=models.PROTECT, related_name="scores")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="scores")
    value = models.PositiveSmallIntegerField()
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")
    superseded_by = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes"
    )

    class Meta:
        ordering = ["project", "criterion", "-created_at"]
        indexes = [models.Index(fields=["project", "superseded_by"], name="score_current")]

    def __str__(self) -> str:
        return f"{self.value} on {self.criterion_id}"


class StoredTotal(models.Model):
    """A proposal's total as `investment.selectors.score_proposal` derives it, stored with what
    it was derived at (`investment.totals`): the project's registers revision (raised by every
    change of its business case and registers, so of every figure a data criterion reads), the
    scoring model's newest version number, the project's newest score and the code deployed.
    Read only while all four are still the project's; derived again, and stored, otherwise."""

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    revision = models.PositiveBigIntegerField()
    model_number = models.PositiveIntegerField(null=True)
    last_score_id = models.BigIntegerField(null=True)
    deployed = models.TextField()  # settings.DEPLOY_VERSION: new rules derive every total again
    # sum(weight x points) / sum(weight) of points 1 to POINTS: never above 5.00.
    total = models.DecimalField(max_digits=5, decimal_places=2, null=True)

    def __str__(self) -> str:
        return f"Stored total of project {self.project_id}"


class Scenario(models.Model):
    """A named selection over proposals and running projects within a budget (per year, a
    mapping {"2027": amount}, or one total), with must-haves. `revision` counts its edits."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=NAME_MAX)
    notes = models.TextField(blank=True, default="")
    budget_by_year = models.JSONField(default=dict, blank=True)
    budget_total = MoneyField(null=True, blank=True)
    # Project keys: the selection (empty: every proposal) and the must-haves among them.
    selection = models.JSONField(default=list, blank=True)
    must_haves = models.JSONField(default=list, blank=True)
    copy_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="copies"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_account_id = models.CharField(max_length=128, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)
    updated_by_account_id = models.CharField(max_length=128, blank=True, default="")
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["name", "created_at"]

    def __str__(self) -> str:
        return self.name


class PortfolioDecision(models.Model):
    """An entry of the portfolio decision log: the board's made choice of a scenario, with
    its minutes and what the scenario held then. Immutable once made: the same rule as a
    project's decision log (`registers.services.decisions.require_editable`)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    decision = models.CharField(max_length=NAME_MAX)
    rationale = models.TextField(blank=True, default="")
    made_on = models.DateField()
    made_by_account_id = models.CharField(max_length=128)
    minutes_ref = models.JSONField()
    scenario = models.ForeignKey(Scenario, on_delete=models.PROTECT, related_name="decisions")
    scenario_name = models.CharField(max_length=NAME_MAX)
    scenario_revision = models.PositiveIntegerField()
    # The prioritised proposals and the scenario's figures at the moment of the choice.
    proposals = models.JSONField(default=list)
    figures = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    recorded_by = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        ordering = ["-made_on", "-created_at"]

    def __str__(self) -> str:
        return self.decision

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise Conflict(made_message(self))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise Conflict(made_message(self))


def made_message(decision: PortfolioDecision) -> str:
    return (
        f"This portfolio decision was made on {decision.made_on.isoformat()} and can no "
        "longer be changed or deleted."
    )


class Prioritised(models.Model):
    """The marker a business case carries once the board chose a scenario holding it:
    "prioritised in scenario X". Kept beside the business case (the charter does not know of
    investment decisions); the latest choice holding the proposal sets it."""

    business_case = models.OneToOneField(
        BusinessCase, on_delete=models.CASCADE, primary_key=True, related_name="prioritised"
    )
    decision = models.ForeignKey(
        PortfolioDecision, on_delete=models.PROTECT, related_name="prioritised"
    )
    scenario_name = models.CharField(max_length=NAME_MAX)
    at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "prioritised"

    def __str__(self) -> str:
        return f"prioritised in scenario {self.scenario_name}"
