"""The charter app's words for the kernel's tables: labels of its states, choices and field
names (`governance.labels`), and how the audit log reads its entries (`governance.audit_text`).
Registered by the app's AppConfig.ready() (`governance.audit_text.register_app_words`), so
the kernel holds no upper app's vocabulary."""

from charter.specs import CharterSpec, CloseoutSpec, RealisationSpec
from governance import specs

LABEL_STATES = {
    "ClosingSubmitted": "Close-out submitted",
    "InRealisation": "In realisation",
    "NotRealised": "Not realised",
    "InMaintenance": "In maintenance",
}

LABEL_CHOICES = {
    "TransferredToBau": "Transferred to BAU",
    "DeferredToBau": "Deferred to BAU",
    "ApprovedAsShipped": "Approved as shipped",
}

# The fields the whole site names by their declared label (charter.specs, SiteLabel), and
# the financial case's figures.
LABEL_FIELDS = {
    **{
        api: label
        for spec in (CharterSpec, CloseoutSpec, RealisationSpec)
        for api, label in specs.site_labels(spec).items()
    },
    "roiPct": "ROI %",
    "discountRatePct": "Discount rate %",
    "npv": "NPV",
    "irr": "IRR",
    # The financial case's two models, as its form names them.
    "builtin": "Built-in model",
    "attached": "Attached model",
}

AUDIT_NOUNS = {"businessCase": "the business case"}

AUDIT_PHRASES = {
    "charter.updated": "edited the business case",
    "charter.theme_renamed": "renamed the business case's theme (with the site's theme)",
    "charter.drafting_started": "started drafting the business case",
    "charter.submitted": "submitted the business case for approval",
    "charter.returned": "returned the business case with notes",
    "charter.approved": "approved the business case",
    "charter.reopened": "re-opened the business case for amendment",
    "charter.return_note_addressed": "addressed a return note on the business case",
    "charter.archived": "archived the business case",
    "charter.killed": "stopped the project",
    "charter.closed": "closed the project",
    "charter.steerco_scheduled": "scheduled the first steering committee",
    "charter.steerco_held": "recorded the first steering committee as held",
    "charter.steerco_confirmed": "confirmed the first steering committee as held",
    "charter.approval_nudge": "reminded the sponsor of the business case",
    "closeout.started": "started the close-out",
    "closeout.updated": "edited the close-out",
    "closeout.submitted": "submitted the close-out",
    "closeout.returned": "returned the close-out with notes",
    "closeout.return_note_addressed": "addressed a return note on the close-out",
    "closeout.handover_acknowledged": "acknowledged the BAU handover",
    "closeout.handover_escalated": "escalated the BAU handover",
    "realisation.started": "started benefits realisation",
    "realisation.updated": "edited the realisation record",
    "realisation.reviewed": "recorded a benefit review",
    "realisation.kpi_resolved": "resolved the adoption KPI",
    "realisation.realised": "judged the benefits realised",
    "realisation.not_realised": "judged the benefits not realised",
    "maintenance.started": "moved the project into maintenance",
    "maintenance.retired": "retired the project from maintenance",
}
