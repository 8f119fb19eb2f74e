"""The status app's words for the kernel's tables: labels of its states, choices and field
names (`governance.labels`), and how the audit log reads its entries (`governance.audit_text`).
Registered by the app's AppConfig.ready() (`governance.audit_text.register_app_words`), so
the kernel holds no upper app's vocabulary."""

from governance import specs
from status.specs import StatusSpec

# The fields the whole site names by their declared label (status.specs, SiteLabel).
LABEL_FIELDS = specs.site_labels(StatusSpec)

AUDIT_NOUNS = {"projectStatus": "the project status", "statusReport": "status report"}

AUDIT_VERBS = {
    "status_report.created": "started",
    "status_report.published": "published",
    "status_report.updated": "edited",
    "status_report.deleted": "discarded",
}

AUDIT_PHRASES = {
    "status.updated": "updated the project status",
    "status.checklist_dismissed": "dismissed an initiation checklist item",
    "status.checklist_restored": "restored an initiation checklist item",
    "status.initiation_acknowledged": "acknowledged initiation as complete",
    "status.phase_followed": "moved the phase to the current stage",
}

AUDIT_IMPERSONAL = {
    "status.initiation_started": "Initiation started: the business case was approved",
    "status.initiation_completed": "Initiation completed",
}

AUDIT_KIND_NOUNS = {"status_report": "status report"}
