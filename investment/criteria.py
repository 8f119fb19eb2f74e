"""The data criteria, declared once: each source key names a figure the site already derives
(the financial case's NPV, payback and total cost in `charter.finance`; the adoption inputs'
completeness in `charter.derive`; the risk register's highest open score, the portfolio's
`topRiskScore` of `status.health`), which way is better, and the default thresholds. A
criterion of a model version reading one of them stores its own four thresholds: the figure
maps to 1-5 by how many of them it passes."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from charter import derive as charter_derive
from charter import finance
from governance import formatting
from governance.cleaning import finite_decimal

ADOPTION_INPUTS = 4  # adoptionAffected, adoptionKpi, changeSaturation, adoptionOwner


@dataclass(frozen=True)
class Inputs:
    """What the data criteria read of one proposal (loaded in bulk by the selectors)."""

    financial_case: Mapping[str, Any] | None
    adoption_missing: Sequence[str]
    top_risk_score: int | None


@dataclass(frozen=True)
class DataSource:
    key: str
    label: str
    unit: str
    higher_is_better: bool
    thresholds: tuple[Decimal, Decimal, Decimal, Decimal]
    figure: Callable[[Inputs], Decimal | None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "higherIsBetter": self.higher_is_better,
            "defaultThresholds": [float(t) for t in self.thresholds],
        }


def headline(stored: Mapping[str, Any] | None, metric: str) -> Decimal | None:
    """One of the financial case's metrics (`finance.METRICS`) as the business case shows it:
    the builtin model's computed figure, the attached model's headline figure, or None."""
    if not stored:
        return None
    shown = finance.present(stored)
    if shown["mode"] == "builtin":
        return finite_decimal(shown["builtin"]["computed"].get(metric))
    if shown["mode"] == "attached":
        return finite_decimal(shown["attached"].get(metric))
    return None


def _npv(inputs: Inputs) -> Decimal | None:
    return headline(inputs.financial_case, "npv")


def _payback(inputs: Inputs) -> Decimal | None:
    return headline(inputs.financial_case, "paybackYears")


def _total_cost(inputs: Inputs) -> Decimal | None:
    return finance.total_cost(inputs.financial_case) if inputs.financial_case else None


def _adoption(inputs: Inputs) -> Decimal | None:
    return Decimal(ADOPTION_INPUTS - len(inputs.adoption_missing))


def _top_risk(inputs: Inputs) -> Decimal | None:
    # No open scored risk is the best case, not an unknown one.
    return Decimal(inputs.top_risk_score or 0)


def _d(*values: int) -> tuple[Decimal, Decimal, Decimal, Decimal]:
    a, b, c, d = (Decimal(v) for v in values)
    return a, b, c, d


CATALOGUE: dict[str, DataSource] = {
    source.key: source
    for source in (
        DataSource(
            "npv", "Net present value", "money", True, _d(0, 100_000, 500_000, 1_000_000), _npv
        ),
        DataSource("paybackYears", "Payback (years)", "years", False, _d(1, 2, 3, 5), _payback),
        DataSource(
            "totalCost",
            "Total cost (financial case)",
            "money",
            False,
            _d(50_000, 200_000, 500_000, 1_000_000),
            _total_cost,
        ),
        DataSource(
            "adoptionInputs",
            "Adoption inputs complete (of 4)",
            "count",
            True,
            _d(1, 2, 3, 4),
            _adoption,
        ),
        DataSource(
            "topRiskScore", "Highest open risk score", "score", False, _d(4, 9, 14, 19), _top_risk
        ),
    )
}
SOURCES = ("person", *CATALOGUE)


ADOPTION_FIELDS = ("adoptionAffected", "adoptionKpi", "changeSaturation", "adoptionOwner")


def adoption_missing(case: Any) -> list[str]:
    """The adoption inputs a business case lacks (`charter.derive.adoption_gap_fields`); a
    project without a business case lacks them all."""
    return charter_derive.adoption_gap_fields(case) if case is not None else list(ADOPTION_FIELDS)


def points(figure: Decimal | None, thresholds: Sequence[Any], higher_is_better: bool) -> int | None:
    """The figure on the 1-5 scale: with ascending thresholds t1..t4, higher-is-better scores
    1 plus how many thresholds the figure reaches (>=); lower-is-better scores 5 less how many
    it exceeds (>). None when there is no figure."""
    if figure is None:
        return None
    bounds = [Decimal(str(t)) for t in thresholds]
    if higher_is_better:
        return 1 + sum(1 for t in bounds if figure >= t)
    return 5 - sum(1 for t in bounds if figure > t)


def scale_words(source_key: str, thresholds: Sequence[Any] | None) -> str:
    """How a data criterion's figure becomes points, in words, as `points` decides it: which
    figures earn 2 to 5 points (higher is better), or 5 down to 2 (lower is better)."""
    source = CATALOGUE[source_key]
    bounds = [formatting.number(t) for t in (thresholds or source.thresholds)]
    if source.higher_is_better:
        steps = [f"{p} points from {t}" for p, t in zip((2, 3, 4, 5), bounds, strict=False)]
        return "higher is better: " + ", ".join(steps) + "; 1 point below"
    steps = [f"{p} points up to {t}" for p, t in zip((5, 4, 3, 2), bounds, strict=False)]
    return "lower is better: " + ", ".join(steps) + "; 1 point above"


def data_score(
    source_key: str, thresholds: Sequence[Any] | None, inputs: Inputs
) -> tuple[Decimal | None, int | None]:
    """The figure a data criterion reads and its points under the criterion's thresholds."""
    source = CATALOGUE[source_key]
    figure = source.figure(inputs)
    return figure, points(figure, thresholds or source.thresholds, source.higher_is_better)
