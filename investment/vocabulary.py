"""Investment decisions' words for the kernel's tables: how the audit log reads its entries
(`governance.audit_text`). Registered by the app's AppConfig.ready()."""

AUDIT_NOUNS = {
    "scoringModelVersion": "scoring model version",
    "investmentScore": "score",
    "scenario": "scenario",
    "portfolioDecision": "portfolio decision",
}

AUDIT_PHRASES = {
    "investment.model_version_created": "made a new version of the scoring model",
    "investment.scored": "scored a proposal",
    "investment.scenario_created": "created a scenario",
    "investment.scenario_updated": "changed a scenario",
    "investment.scenario_copied": "copied a scenario",
    "investment.scenario_deleted": "deleted a scenario",
    "investment.scenario_chosen": "recorded the board's choice of a scenario",
}
