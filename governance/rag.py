"""The one colouring of a risk score. The register's heat, both risk matrices (a project's and
the portfolio's), the derived risk RAG and its drivers all call `risk_zone`: a score of 16
reads Red on every one of them, under the same site thresholds (docs/product.md section 3)."""

from collections.abc import Mapping
from typing import Any

ZONES = ("Red", "Amber", "Green")


def risk_zone(score: int | None, thresholds: Mapping[str, Any]) -> str:
    """Red from riskRedMinScore, Amber from riskAmberMinScore, else Green; "None" without a
    score. `thresholds` are the effective RAG thresholds (`governance.services.rag_thresholds`)."""
    if score is None:
        return "None"
    if score >= thresholds["riskRedMinScore"]:
        return "Red"
    if score >= thresholds["riskAmberMinScore"]:
        return "Amber"
    return "Green"
