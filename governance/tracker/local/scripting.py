"""Create-or-update operations on the local tracker, shared by `manage.py local_tracker`,
`manage.py seed_demo` and the tests. Each is idempotent."""

import uuid
from collections.abc import Iterable

from django.db import transaction

from governance import cleaning
from governance.models import User, summaries_changed
from governance.people import forget
from governance.tracker.local.models import (
    LocalAccount,
    LocalBrowseGrant,
    LocalGroup,
    LocalIssue,
    LocalProject,
)


class ScriptError(Exception):
    pass


def new_account_id() -> str:
    # The shape of a Jira Cloud accountId: a numeric prefix and a UUID.
    return f"712020:{uuid.uuid4()}"


@transaction.atomic
def ensure_user(
    name: str,
    *,
    display_name: str | None = None,
    admin: bool = False,
    password: str | None = None,
    email: str | None = None,
) -> User:
    """A tracker account and the Django user that signs in as it. Flags only ever add:
    leaving out --admin on a second run does not demote."""
    account = LocalAccount.objects.filter(name=name).first()
    if account is None:
        account = LocalAccount.objects.create(
            name=name,
            account_id=new_account_id(),
            display_name=display_name or name,
            email=email or "",
            is_site_admin=admin,
        )
    else:
        changed = []
        if display_name and account.display_name != display_name:
            account.display_name = display_name
            changed.append("display_name")
        if admin and not account.is_site_admin:
            account.is_site_admin = True
            changed.append("is_site_admin")
        if email and account.email != email:
            account.email = email
            changed.append("email")
        if changed:
            account.save(update_fields=changed)
    user = User.objects.filter(username=name).first()
    if user is None:
        user = User(username=name, account_id=account.account_id, email=account.email)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
    else:
        user.account_id = account.account_id
        if password:
            user.set_password(password)
    if admin:
        user.is_staff = user.is_superuser = True
    user.save()
    forget([account.account_id])
    return user


def _account(name: str) -> LocalAccount:
    account = LocalAccount.objects.filter(name=name).first()
    if account is None:
        raise ScriptError(
            f"No local tracker user {name!r}; create it with `local_tracker user {name}`."
        )
    return account


@transaction.atomic
def ensure_project(key: str, *, name: str, lead: str, browsers: Iterable[str] = ()) -> LocalProject:
    key = key.strip().upper()
    if not key.isalnum() or not key[0].isalpha() or len(key) > 32:
        raise ScriptError(
            f"Project key {key!r} must be letters and digits, starting with a letter."
        )
    lead_account = _account(lead)
    project, created = LocalProject.objects.get_or_create(
        key=key, defaults={"name": name, "lead": lead_account}
    )
    if not created and (project.name, project.lead_id) != (name, lead_account.pk):
        project.name, project.lead = name, lead_account
        project.save(update_fields=["name", "lead"])
    names = {lead, *browsers}
    accounts = list(LocalAccount.objects.filter(name__in=names))
    for name in sorted(names - {a.name for a in accounts}):
        _account(name)  # raises: no such account
    # One statement for every grant; a grant the project already holds stays as it is.
    LocalBrowseGrant.objects.bulk_create(
        [LocalBrowseGrant(project=project, account=account) for account in accounts],
        ignore_conflicts=True,
    )
    summaries_changed()  # a bulk write sends no signal (`governance.summaries`)
    return project


@transaction.atomic
def ensure_issue(key: str, *, summary: str, issue_type: str = "Epic") -> LocalIssue:
    key = key.strip().upper()
    project_key, _, number = key.rpartition("-")
    if not project_key or cleaning.whole_number(number) is None:
        raise ScriptError(f"Issue key {key!r} must look like PROJ-12.")
    project = LocalProject.objects.filter(key=project_key).first()
    if project is None:
        raise ScriptError(f"No local tracker project {project_key!r}; create it first.")
    issue, created = LocalIssue.objects.get_or_create(
        key=key, defaults={"project": project, "summary": summary, "issue_type": issue_type}
    )
    if not created and (issue.summary, issue.issue_type) != (summary, issue_type):
        issue.summary, issue.issue_type = summary, issue_type
        issue.save(update_fields=["summary", "issue_type"])
    return issue


@transaction.atomic
def ensure_group(name: str, *, members: list[str]) -> LocalGroup:
    group, _ = LocalGroup.objects.get_or_create(name=name)
    group.members.add(*[_account(m) for m in members])
    return group
