"""The registers app's words for the kernel's tables: labels of its states, choices and field
names (`governance.labels`), and how the audit log reads its entries (`governance.audit_text`).
Registered by the app's AppConfig.ready() (`governance.audit_text.register_app_words`), so
the kernel holds no upper app's vocabulary."""

import functools

from governance import labels as formatting_labels
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


# --- the columns of a register's files -------------------------------------------------------


def _compact(text: str) -> str:
    """A column's header compared without case, spaces or punctuation: "Owner e-mail",
    "owner_email" and "ownerEmail" are one header."""
    return "".join(c for c in text.casefold() if c.isalnum())


def person_fields(register: str) -> list[str]:
    """The API names of the register's person fields (accountIds; exports name the person)."""
    return specs.with_marker(SPECS[register], specs.Account)


def column_labels(register: str) -> dict[str, str]:
    """{API name: the label a person reads for it on the register's pages}."""
    return specs.labels(SPECS[register])


def column_label(register: str, field: str) -> str:
    """The header a person reads for a field: its label on the register's pages."""
    return column_labels(register).get(field, field)


def export_header(field: str, label: str | None) -> str:
    """The header an export for people writes for a field (`label`: its label on the pages):
    that label, a person field named by its role ("Updated by", not "Updated by account
    id"). `field_for_column` reads each back, so such an export imports as it is."""
    if field == "id":
        return "ID"
    text = label or formatting_labels.words(field)
    if field.endswith("AccountId") and text.endswith(" account id"):
        text = formatting_labels.words(field.removesuffix("AccountId"))
    return text


@functools.cache
def _columns(register: str) -> dict[str, str]:
    """{compact header: API name} of every header `field_for_column` takes besides the API
    names themselves. Labels come first (where a field only the API has, such as actualEnd,
    shares its label with a field of the pages, the label names the page's field); then,
    for each person field, its label or the field's stem followed by "name", "e-mail" or
    "account id" ("Owner e-mail", ownerName); then the API names written in another case."""
    spec = SPECS[register]
    declared = specs.fields(spec)
    found: dict[str, str] = {}
    for api_only in (False, True):
        for api, field in declared.items():
            if field.has(specs.ApiOnly) == api_only:
                found.setdefault(_compact(field.label), api)
    for api in person_fields(register):
        stems = {_compact(api.removesuffix("AccountId")), _compact(declared[api].label)}
        for stem in sorted(stems):
            for tail in ("name", "displayname", "email", "emailaddress", "accountid"):
                found.setdefault(stem + tail, api)
    labels = specs.labels(spec)
    for api in declared:
        found.setdefault(_compact(export_header(api, labels.get(api))), api)
    for api in declared:
        found.setdefault(_compact(api), api)
    return found


def field_for_column(register: str, header: str) -> str | None:
    """The register's field a file's column header names, else None: its API name
    (ownerAccountId), its label on the pages (Owner, Planned start), and for a person field
    a name, e-mail or accountId column of it (ownerName, "Owner e-mail"). The one mapping of
    headers to fields: the import reads with it, and exports that write labels write headers
    it reads back."""
    header = header.strip()
    if header in specs.fields(SPECS[register]):
        return header
    return _columns(register).get(_compact(header))


def is_account_column(register: str, header: str, field: str) -> bool:
    """Whether the header names the person field's accountId itself (ownerAccountId,
    "Owner account id"), rather than the person's name or e-mail."""
    label = _compact(column_label(register, field))
    return _compact(header) in (_compact(field), label + "accountid")


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

AUDIT_KIND_NOUNS = {
    "change": "change request",
    "work_package": "work package",
    "minutes": "steering minutes",
}
