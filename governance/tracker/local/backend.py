"""The local tracker backend: the Tracker protocol over the local_tracker models."""

from collections.abc import Iterable
from typing import Any, TypedDict

from django.db.models import Exists, F, Func, OuterRef, Q, QuerySet, Subquery, Value

from governance import cleaning, mirror
from governance.tracker import get_tracker
from governance.tracker.base import TrackerIssue, TrackerProject, TrackerUser
from governance.tracker.local.models import (
    LocalAccount,
    LocalBrowseGrant,
    LocalGroup,
    LocalIssue,
    LocalProject,
)


def _user(account: LocalAccount) -> TrackerUser:
    return TrackerUser(
        account_id=account.account_id,
        display_name=account.display_name,
        avatar_url=account.avatar_url,
        email=account.email,
        active=account.active,
    )


def _project(project: LocalProject) -> TrackerProject:
    return TrackerProject(
        key=project.key,
        name=project.name,
        lead_account_id=project.lead.account_id,
        id=str(project.pk),
    )


def _issue(issue: LocalIssue) -> TrackerIssue:
    return TrackerIssue(
        key=issue.key,
        summary=issue.summary,
        issue_type=issue.issue_type,
        status=issue.status,
        work_package=issue.work_package,
    )


class LocalGate:
    """The tracker's part of the access gate for one person and one project, as read by the
    gate's one statement (`LocalTracker.gate_expressions`)."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def can_browse(self, project_key: str) -> bool:
        return bool(self.values["gate_t_browse"])

    def project(self, project_key: str) -> TrackerProject | None:
        name = self.values["gate_t_name"]
        if name is None:
            return None
        return TrackerProject(
            key=project_key, name=name, lead_account_id=self.values["gate_t_lead"]
        )

    def is_site_admin(self) -> bool:
        return bool(self.values["gate_t_admin"])

    def is_group_member(self, group: str) -> bool:
        return bool(self.values["gate_t_group"])


class ProjectKey(TypedDict):
    """A row of `values("key")` over the projects."""

    key: str


class LocalTracker:
    # The access gate (governance.permissions) ----------------------------------------
    def _browsable(self, account_id: str) -> QuerySet[LocalProject]:
        granted = LocalBrowseGrant.objects.filter(account__account_id=account_id)
        return LocalProject.objects.filter(
            Q(lead__account_id=account_id) | Q(pk__in=granted.values("project_id"))
        )

    def gate_expressions(
        self, account_id: str, group: str, key: str = "key", *, every: bool = False
    ) -> dict[str, Any]:
        """The tracker's answers as expressions over a governance project row (its `key`, or
        the project key a row of another model reaches: `key`, a path), for the gate to read in
        its one statement: the project's name and lead, whether the person browses it, is a
        site administrator, is a member of `group` (an expression).

        How the person's grants are asked (the same grants either way): `every`, for a
        statement over every project (a count, a summary), reads them all once and hashes them;
        otherwise (one project, or a page walked in the project's order that stops at its
        size) each project's grant is looked up by the (project, account) index, so the
        statement does not grow with the grants (a page at 10,000 grants: 12-14 ms hashed,
        1.3-2.4 ms looked up; a count of every project: 33-44 ms hashed, 65-87 ms looked up;
        record 0308)."""
        project = LocalProject.objects.filter(key=OuterRef(key))
        if not account_id:
            return {
                "gate_t_name": Subquery(project.values("name")[:1]),
                "gate_t_lead": Subquery(project.values("lead__account_id")[:1]),
                "gate_t_browse": Value(False),
                **self.site_gate_expressions(account_id, group),
            }
        granted = LocalBrowseGrant.objects.filter(account__account_id=account_id)
        holds = (
            Q(pk__in=granted.values("project_id"))
            if every
            else Q(Exists(granted.filter(project_id=OuterRef("pk"))))
        )
        browse = project.filter(Q(lead__account_id=account_id) | holds)
        return {
            "gate_t_name": Subquery(project.values("name")[:1]),
            "gate_t_lead": Subquery(project.values("lead__account_id")[:1]),
            "gate_t_browse": Exists(browse),
            **self.site_gate_expressions(account_id, group),
        }

    def site_gate_expressions(self, account_id: str, group: str) -> dict[str, Any]:
        """Whether the person is a site administrator and a member of `group` (an
        expression), for the gate's one statement."""
        if not account_id:
            return {"gate_t_admin": Value(False), "gate_t_group": Value(False)}
        return {
            "gate_t_admin": Exists(
                LocalAccount.objects.filter(account_id=account_id, is_site_admin=True)
            ),
            "gate_t_group": Exists(
                LocalGroup.objects.filter(name=group, members__account_id=account_id)
            ),
        }

    def gate_led_keys(self, account_id: str) -> QuerySet[LocalProject, str]:
        """The keys of the projects the person leads now (the `gate_t_lead` answer asked of
        every project at once), as a sub-select: `gatefilter.lead_condition`."""
        return LocalProject.objects.filter(lead__account_id=account_id).values_list(
            "key", flat=True
        )

    def gate_browsable_keys(
        self, account_id: str
    ) -> tuple[QuerySet[LocalProject, ProjectKey], Subquery]:
        """The keys of the projects the person browses, and their number, as sub-selects."""
        browsable = self._browsable(account_id)
        count = browsable.order_by().annotate(n=Func(F("pk"), function="COUNT")).values("n")
        return browsable.values("key"), Subquery(count)

    def gate(self, account_id: str, values: dict[str, Any]) -> LocalGate:
        return LocalGate(values)

    def current_user(self, account_id: str) -> TrackerUser | None:
        account = LocalAccount.objects.filter(account_id=account_id).first()
        return _user(account) if account else None

    def users_bulk(self, account_ids: Iterable[str]) -> dict[str, TrackerUser]:
        ids = {a for a in account_ids if a}
        if not ids:
            return {}
        return {a.account_id: _user(a) for a in LocalAccount.objects.filter(account_id__in=ids)}

    def search_users(self, query: str, *, limit: int = 20) -> list[TrackerUser]:
        query = query.strip()
        accounts = LocalAccount.objects.filter(active=True)
        if query:
            accounts = accounts.filter(
                Q(display_name__icontains=query)
                | Q(name__icontains=query)
                | Q(email__icontains=query)
            )
        return [_user(a) for a in accounts[:limit]]

    def project_people(self, project_key: str) -> list[TrackerUser]:
        """The active people who may browse the project (its lead and those granted), in one
        query (`governance.roster.project_people`). The lead and the grants are each asked of
        the project by its key, not joined to the accounts: joined, a person's led projects
        were multiplied by their grants before the filter (10,000 of each: 100 million rows and
        4.4 s for one register page)."""
        led = LocalProject.objects.filter(key=project_key).values("lead_id")
        granted = LocalBrowseGrant.objects.filter(project__key=project_key).values("account_id")
        accounts = LocalAccount.objects.filter(Q(pk__in=led) | Q(pk__in=granted), active=True)
        return [_user(a) for a in accounts]

    def is_site_admin(self, account_id: str) -> bool:
        return LocalAccount.objects.filter(account_id=account_id, is_site_admin=True).exists()

    def is_group_member(self, account_id: str, group: str) -> bool:
        return LocalGroup.objects.filter(name=group, members__account_id=account_id).exists()

    def group_exists(self, group: str) -> bool:
        return LocalGroup.objects.filter(name=group).exists()

    def get_project(self, key: str) -> TrackerProject | None:
        """By key or by id (the row's id, stable when an administrator changes the key)."""
        pk = cleaning.whole_number(key)
        found = {"pk": pk} if pk is not None else {"key": key}
        project = LocalProject.objects.select_related("lead").filter(**found).first()
        return _project(project) if project else None

    def browsable_projects(self, account_id: str) -> list[TrackerProject]:
        rows = (
            self._browsable(account_id)
            .order_by("key")
            .values_list("key", "name", "lead__account_id", "pk")
        )
        return [
            TrackerProject(key=k, name=name, lead_account_id=lead, id=str(pk))
            for k, name, lead, pk in rows
        ]

    def all_projects(self) -> list[TrackerProject]:
        """Every project (for the mirror's periodic upkeep, `governance.mirror.refresh_all`)."""
        return [_project(p) for p in LocalProject.objects.select_related("lead")]

    def can_browse(self, account_id: str, project_key: str) -> bool:
        if not account_id:
            return False
        return (
            LocalProject.objects.filter(key=project_key)
            .filter(
                Q(lead__account_id=account_id) | Q(localbrowsegrant__account__account_id=account_id)
            )
            .exists()
        )

    def browsers_among(self, project_key: str, account_ids: Iterable[str | None]) -> set[str]:
        """Which of these people may browse the project, in two queries whatever their number."""
        ids = {a for a in account_ids if a}
        if not ids:
            return set()
        project = LocalProject.objects.filter(key=project_key)
        lead = set(
            project.filter(lead__account_id__in=ids).values_list("lead__account_id", flat=True)
        )
        granted = set(
            LocalBrowseGrant.objects.filter(
                project__key=project_key, account__account_id__in=ids
            ).values_list("account__account_id", flat=True)
        )
        return lead | granted

    def search_issues(self, project_key: str, text: str, *, limit: int = 20) -> list[TrackerIssue]:
        issues = LocalIssue.objects.filter(project__key=project_key)
        text = text.strip()
        if text:
            issues = issues.filter(Q(key__icontains=text) | Q(summary__icontains=text))
        return [_issue(i) for i in issues.order_by("key")[:limit]]

    def get_issues(self, keys: Iterable[str]) -> dict[str, TrackerIssue]:
        keys = {k for k in keys if k}
        if not keys:
            return {}
        return {i.key: _issue(i) for i in LocalIssue.objects.filter(key__in=keys)}

    def set_work_package_field(self, issue_key: str, value: str | None) -> None:
        LocalIssue.objects.filter(key=issue_key).update(work_package=value)


def mirror_saved_project(
    sender: Any, instance: LocalProject, raw: bool = False, **kwargs: Any
) -> None:
    """The local tracker's own webhook (`post_save`): a project saved here is mirrored at
    once, as Jira's project events mirror Jira's (`governance.mirror`)."""
    if not raw and isinstance(get_tracker(), LocalTracker):
        mirror.sync_project(_project(instance))


def mirror_on_sign_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """`user_logged_in` with the local tracker: the person's projects are mirrored before
    their first page (`governance.mirror.sync_browsable`)."""
    if getattr(user, "account_id", "") and isinstance(get_tracker(), LocalTracker):
        mirror.sync_browsable(user.account_id)
