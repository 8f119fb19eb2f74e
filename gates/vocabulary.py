"""The gates app's words for the kernel's tables: labels of its field names, and how the audit
log reads its entries (`governance.audit_text`). Registered by the app's AppConfig.ready().
The stage and review states and the outcomes read as they are (no label of their own)."""

LABEL_FIELDS: dict[str, str] = {
    "stages": "Stages",
    "workPackageIds": "Work packages",
    "unmetCriteria": "Unmet criteria gone through",
    "holdUntil": "Hold until",
}

AUDIT_NOUNS = {"stagePlan": "the stage plan", "stage": "stage", "gateReview": "gate review"}

AUDIT_VERBS = {
    "gate_review.requested": "requested",
    "gate_review.decided": "decided",
}

AUDIT_PHRASES = {
    "stage_plan.created": "made the stage plan from the site's default stages",
    "stage_plan.updated": "edited the stage plan",
    "stage.started": "started a stage",
    "gate_criterion.added": "added a gate criterion",
    "gate_criterion.dismissed": "dismissed a gate criterion",
}

AUDIT_KIND_NOUNS = {
    "stage_plan": "stage plan",
    "gate_review": "gate review",
    "gate_criterion": "gate criterion",
}
