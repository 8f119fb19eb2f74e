"""The registers app's words for the kernel's tables: labels of its states, choices and field
names (`governance.labels`), and how the audit log reads its entries (`governance.audit_text`).
Registered by the app's AppConfig.ready() (`governance.audit_text.register_app_words`), so
the kernel holds no upper app's vocabulary."""

from governance import specs
from registers.specs import SPECS

LABEL_STATES = {"AwaitingApplication": "Awaiting application"}

LABEL_CHOICES = {"None": "No RAG"}

# The fields the whole site names by their declared label (registers.specs, SiteLabel), and
# the names that are no resource's field.
LABEL_FIELDS = {
    "q": "Search",
    **{api: label for spec in SPECS.values() for api, label in specs.site_labels(spec).items()},
    "authorAccountId": "Author",
}

AUDIT_NOUNS = {
    "workPackage": "work package",
    "risk": "risk",
    "decision": "decision",
    "changeRequest": "change request",
    "steeringMinutes": "steering minutes",
}

AUDIT_VERBS = {
    "change.created": "raised",
    "change.approved": "approved",
    "change.rejected": "rejected",
    "change.withdrawn": "withdrew",
    "change.applied": "applied",
    "decision.created": "logged",
    "decision.made": "took",
    "decision.note_added": "added a note to",
    "risk.decision_recorded": "recorded the decision treating",
    "work_package.baselined": "baselined",
    "work_package.issue_linked": "linked an issue to",
    "work_package.issue_unlinked": "unlinked an issue from",
    "work_package.reordered": "reordered",
    "minutes.recorded": "recorded",
}

AUDIT_PHRASES: dict[str, str] = {}

AUDIT_IMPERSONAL: dict[str, str] = {}

AUDIT_KIND_NOUNS = {
    "change": "change request",
    "work_package": "work package",
    "minutes": "steering minutes",
}
