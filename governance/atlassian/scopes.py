"""The one declaration of what each Atlassian call needs: the operation (its `operationId` in
contracts/atlassian), who makes it ("user": the signed-in person's OAuth token; "app": the
service account; "admin": a Jira administrator's own OAuth token, its scopes asked for only
when an administrator grants them at `/accounts/atlassian/login/?grant=webhooks`) and the
OAuth 2.0 scopes Atlassian's document gives for it (the classic scopes, state "Current").
Everything else is derived from this table: the scopes asked for at sign-in (the "user"
calls', plus `offline_access`) and by an administrator's webhook grant, the scopes a scoped
service token must carry (the "app" calls'), `atlassian_check`'s scope check, and the table
in docs/atlassian.md (`python -m governance.atlassian.scopes` prints it; a test compares).
A call made with credentials its row does not name is refused by the HTTP client."""

from dataclasses import dataclass

USER, APP, ADMIN = "user", "app", "admin"
JIRA, CONFLUENCE = "Jira", "Confluence"
# Refresh tokens: asked for at sign-in, used by no call.
OFFLINE = "offline_access"


@dataclass(frozen=True)
class Call:
    product: str
    document: str  # the file in contracts/atlassian ("" when it is in none)
    callers: tuple[str, ...]
    scopes: tuple[str, ...]
    use: str


_J = "jira-platform-v3.subset.json"
_C2 = "confluence-v2.subset.json"
_C1 = "confluence-v1-search.subset.json"
_RW, _RU = ("read:jira-work",), ("read:jira-user",)
_MC, _MP = ("manage:jira-configuration",), ("manage:jira-project",)
_WH = ("read:jira-work", "manage:jira-webhook")

CALLS: dict[str, Call] = {
    # Jira, as the person ------------------------------------------------------------------
    "getCurrentUser": Call(JIRA, _J, (USER, APP), _RU, "who signed in; the service account"),
    "getMyPermissions": Call(
        JIRA, _J, (USER, APP), _RW, "may I browse P; am I a site admin; the check"
    ),
    "searchProjects": Call(JIRA, _J, (USER,), _RW, "My projects"),
    "getIssuePickerResource": Call(JIRA, _J, (USER, APP), _RW, "the issue picker"),
    "searchAndReconsileIssuesUsingJqlPost": Call(
        JIRA, _J, (USER, APP), _RW, "linked issues; the picker's recent issues"
    ),
    "getIssue": Call(JIRA, _J, (USER, APP), _RW, "a linked issue JQL refused"),
    # Jira, as the app -----------------------------------------------------------------------
    "bulkGetUsers": Call(JIRA, _J, (APP,), _RU, "names of people"),
    "findUsers": Call(JIRA, "", (APP,), _RU, "user search (not in the documents)"),
    "findUsersWithAllPermissions": Call(JIRA, _J, (APP,), _RU, "the people pickers"),
    "getBulkPermissions": Call(JIRA, _J, (APP,), (), "may X browse P, about others"),
    "getUserGroups": Call(JIRA, _J, (APP,), _RU, "group membership; site admin of others"),
    "getUsersFromGroup": Call(JIRA, _J, (APP,), _MC, "does a group exist"),
    "getProject": Call(JIRA, _J, (APP,), _RW, "a linked project"),
    "getFieldsPaginated": Call(JIRA, _J, (APP,), _RW, "the Work Package field by name"),
    "createCustomField": Call(JIRA, _J, (APP,), _MC, "the Work Package field"),
    "getProjectContextMapping": Call(JIRA, _J, (APP,), _MC, "the field's context"),
    "getContextsForField": Call(JIRA, _J, (APP,), _MC, "the field's context"),
    "createCustomFieldContext": Call(JIRA, _J, (APP,), _MC, "the field's context"),
    "assignProjectsToCustomFieldContext": Call(JIRA, _J, (APP,), _MC, "the field's context"),
    "getIssueTypeScreenSchemeProjectAssociations": Call(
        JIRA, _J, (APP,), _MC, "the field on the edit screens"
    ),
    "getIssueTypeScreenSchemeMappings": Call(
        JIRA, _J, (APP,), _MC, "the field on the edit screens"
    ),
    "getScreenSchemes": Call(JIRA, _J, (APP,), _MP, "the field on the edit screens"),
    "getAllScreenTabs": Call(JIRA, _J, (APP,), _MP, "the field on the edit screens"),
    "getAllScreenTabFields": Call(JIRA, _J, (APP,), _MP, "the field on the edit screens"),
    "addScreenTabField": Call(JIRA, _J, (APP,), _MP, "the field on the edit screens"),
    "getEditIssueMeta": Call(JIRA, _J, (APP,), _RW, "the field is editable"),
    "editIssue": Call(JIRA, _J, (APP,), ("write:jira-work",), "the write-back"),
    # Jira, as the administrator who granted the webhooks -----------------------------------
    "registerDynamicWebhooks": Call(JIRA, _J, (ADMIN,), _WH, "the webhooks"),
    "refreshWebhooks": Call(JIRA, _J, (ADMIN,), _WH, "the webhooks, every 30 days"),
    "deleteWebhookById": Call(JIRA, _J, (ADMIN,), _WH, "webhooks replaced"),
    "getDynamicWebhooksForApp": Call(
        JIRA, _J, (ADMIN,), _WH, "the check; a timed-out registration"
    ),
    # Confluence -------------------------------------------------------------------------------
    "searchByCQL": Call(CONFLUENCE, _C1, (USER,), ("search:confluence",), "the page picker"),
    "getPageById": Call(CONFLUENCE, _C2, (APP,), ("read:page:confluence",), "a linked page"),
    "getSpaces": Call(CONFLUENCE, _C2, (APP,), ("read:space:confluence",), "the wiki space"),
    "createPage": Call(CONFLUENCE, _C2, (APP,), ("write:page:confluence",), "create from template"),
    "getPagesInSpace": Call(
        CONFLUENCE, _C2, (APP,), ("read:page:confluence",), "a page a timed-out create made"
    ),
    "addLabelsToContent": Call(
        CONFLUENCE, _C1, (APP,), ("write:confluence-content",), "a new page's labels"
    ),
    "createFooterComment": Call(
        CONFLUENCE, _C2, (APP,), ("write:comment:confluence",), "the approval nudge"
    ),
    "getPageFooterComments": Call(
        CONFLUENCE,
        _C2,
        (APP,),
        ("read:comment:confluence",),
        "a comment a timed-out nudge made",
    ),
    "createSpace": Call(CONFLUENCE, _C1, (APP,), ("write:confluence-space",), "wiki_setup (v1)"),
}


def products_in_use() -> tuple[str, ...]:
    from django.conf import settings

    used = []
    if settings.TRACKER_BACKEND == "jira":
        used.append(JIRA)
    if settings.WIKI_BACKEND == "confluence":
        used.append(CONFLUENCE)
    return tuple(used)


def needed(caller: str, products: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """scope -> the operations that need it, for calls `caller` makes in `products` (default:
    the products configured), in the table's order."""
    products = products_in_use() if products is None else products
    out: dict[str, list[str]] = {}
    for operation, call in CALLS.items():
        if caller in call.callers and call.product in products:
            for scope in call.scopes:
                out.setdefault(scope, []).append(operation)
    return out


def sign_in_scopes() -> list[str]:
    """What sign-in asks for: the scopes of the calls made as the person, and refresh
    tokens. Persons do not write to Jira as themselves, so no write scope."""
    products = products_in_use() or (JIRA,)
    return [*needed(USER, products), OFFLINE]


def admin_grant_scopes() -> list[str]:
    """What an administrator's grant for the webhooks asks for: sign-in's scopes and the
    administrator's calls' (`?grant=webhooks` on the sign-in URL)."""
    asked = sign_in_scopes()[:-1]
    return [*asked, *(s for s in needed(ADMIN, (JIRA,)) if s not in asked), OFFLINE]


def allows(operation: str, caller: str) -> bool:
    """False only when the table names the operation and not this caller (an administrator's
    calls are made with a person's token: the HTTP client's "user")."""
    call = CALLS.get(operation)
    if call is None:
        return True
    return caller in call.callers or (caller == USER and ADMIN in call.callers)


def markdown() -> str:
    """docs/atlassian.md's scope table, one row per scope, from CALLS."""
    rows = [
        "| scope | as | operations (`operationId`) |",
        "|---|---|---|",
    ]
    for caller in (USER, ADMIN, APP):
        for scope, operations in needed(caller, (JIRA, CONFLUENCE)).items():
            rows.append(f"| `{scope}` | {caller} | {', '.join(f'`{o}`' for o in operations)} |")
        if caller == USER:
            rows.append(f"| `{OFFLINE}` | user | none: refresh tokens, asked for at sign-in |")
    free = [o for o, c in CALLS.items() if not c.scopes]
    rows.append(f"| none | app | {', '.join(f'`{o}`' for o in free)} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(markdown(), end="")
