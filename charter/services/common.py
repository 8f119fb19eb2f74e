"""What every business-case write shares: reading the case (or its defaults), locking it,
checking an act against the lifecycle table and the revision, keeping the kernel's project
mirror current, stamping, saving and auditing in one go."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import transaction
from django.utils import timezone

from charter import acts
from charter.models import BusinessCase
from charter.serializers import stored_fields
from governance import audit, notifications, signals, specs
from governance.cleaning import only
from governance.concurrency import check_version
from governance.errors import ValidationFailed
from governance.models import FROZEN_APPROVAL_STATUSES, AuditEntry, Project
from governance.permissions import Caller
from governance.seats import seat_account_id
from governance.specs import SpecT
from registers.services.changes import reopen_routed

TEXT_MAX = 2000


def current_case(project: Project) -> BusinessCase:
    """The stored business case, or an unsaved one with the defaults (a never-saved case
    reads as the defaults; nothing is written by reading)."""
    case = BusinessCase.objects.filter(project=project).first()
    if case is None:
        case = BusinessCase(project=project)
    case.project = project
    return case


def mirror_values(case: BusinessCase) -> dict[str, Any]:
    """The business-case facts the kernel's gate and freeze read from the project row."""
    steering = []
    for member in case.steering_committee or []:
        account_id = (member or {}).get("accountId")
        if account_id and account_id not in steering:
            steering.append(account_id)
    handover = (case.close_out or {}).get("bauHandover") or {}
    return {
        "approval_status": case.approval_status,
        "sponsor_account_id": seat_account_id(case.decision_authority) or "",
        "steering_account_ids": steering,
        "bau_owner_account_id": handover.get("ownerAccountId") or "",
    }


def sync_mirror(project: Project, case: BusinessCase, caller: Caller | None = None) -> None:
    """Write the mirror in the same transaction as the case; also refresh the caller's
    in-memory project so the page rendered after the write shows the new facts."""
    wanted = mirror_values(case)
    changed = [field for field, value in wanted.items() if getattr(project, field) != value]
    for field in changed:
        setattr(project, field, wanted[field])
    if changed:
        project.save(update_fields=changed)
    if caller is not None and caller.project is not project:
        for field, value in wanted.items():
            setattr(caller.project, field, value)


@dataclass
class Write:
    """A business-case write in progress: the locked project and case, and the case's
    stored fields before the write (for the audit diff)."""

    caller: Caller
    project: Project
    case: BusinessCase
    before: dict[str, Any]

    def finish(
        self, kind: str, *, extra: dict[str, Any] | None = None, stamp: bool = True
    ) -> BusinessCase:
        """Stamp, bump the revision, save, sync the mirror and audit (with `extra` merged into
        the recorded changes, e.g. the change request a re-open cites)."""
        case = self.case
        if stamp:
            case.updated_at = timezone.now()
            case.updated_by_account_id = self.caller.account_id
        case.revision += 1
        with signals.deferred_project_changes():  # the case and its mirror: derived once
            case.save()
            sync_mirror(self.project, case, self.caller)
        changes = audit.diff(self.before, stored_fields(case))
        changes.pop("updatedAt", None)
        changes.pop("updatedByAccountId", None)
        if extra:
            changes.update(extra)
        audit.record(
            actor_account_id=self.caller.account_id,
            project_key=self.project.key,
            kind=kind,
            target_type="businessCase",
            target_id=self.project.key,
            changes=changes,
        )
        if self.case_left("Submitted"):
            # Approved, returned or archived: the approval it was submitted for is done.
            notifications.resolve(f"case_submitted:{self.project.key}:")
        if self.project.registers_frozen and not self.before_frozen:
            # Frozen registers: no change routed to anyone can be decided any more.
            notifications.resolve_project("change_routed", self.project.key)
        elif self.before_frozen and not self.project.registers_frozen:
            # Thawed (a close-out sent back): the routed changes are open again.
            reopen_routed(self.project, resolved_since=frozen_since(self.project.key))
        return case

    def case_left(self, state: str) -> bool:
        return self.before_status == state and self.case.approval_status != state

    @property
    def before_frozen(self) -> bool:
        return self.before_status in FROZEN_APPROVAL_STATUSES

    @property
    def before_status(self) -> str:
        return str(self.before.get("approvalStatus") or "")


def frozen_since(project_key: str) -> Any:
    """When the project's business case last entered a frozen state (its audit entry)."""
    entries = AuditEntry.objects.filter(
        project_key=project_key, target_type="businessCase"
    ).order_by("-at", "-pk")
    for at, changes in entries.values_list("at", "changes").iterator():
        after = ((changes or {}).get("approvalStatus") or {}).get("after")
        if after in FROZEN_APPROVAL_STATUSES:
            return at
    return timezone.now()


def ended(write: Write, act_name: str, reason: str) -> None:
    """Tell the apps above that this act ended delivery (`signals.charter_ended`): the status
    app settles the project's undecided exception, naming the act."""
    signals.charter_ended.send(
        sender=BusinessCase,
        project=write.project,
        act=act_name,
        label=acts.ACTS[act_name].label,
        caller=write.caller,
        at=timezone.now(),
        reason=reason or "",
    )


def lock(caller: Caller) -> tuple[Project, BusinessCase]:
    """Lock the project row (register writes of the project serialise behind it, so the
    freeze cannot race them), then the business case, created with its defaults if needed.
    Call inside `transaction.atomic()`."""
    project = Project.objects.select_for_update().get(pk=caller.project.pk)
    case = BusinessCase.objects.select_for_update().filter(project=project).first()
    if case is None:
        case = BusinessCase.objects.create(project=project)
    case.project = project
    return project, case


def begin(caller: Caller, act: acts.Act, expected_revision: int | None) -> Write:
    """Lock, then refuse: the wrong person (403), the wrong state (409), a stale revision
    (412). Call inside `transaction.atomic()`."""
    project, case = lock(caller)
    acts.check(act, case, caller)
    check_version(case.revision, expected_revision, current_repr=case)
    return Write(caller=caller, project=project, case=case, before=stored_fields(case))


def precheck(caller: Caller, act: acts.Act, expected_revision: int | None = None) -> BusinessCase:
    """The person, state and revision checks without a lock: every service calls it before
    it reads its body, so a refused request answers for the most basic reason first (403
    the wrong person, 409 the wrong state, 412 a stale revision, and only then 422 the body).
    `begin` runs the same checks again under the lock."""
    case = current_case(caller.project)
    acts.check(act, case, caller)
    check_version(case.revision, expected_revision, current_repr=case)
    return case


class CaseAct(Protocol):
    """A business-case act's service: the caller, the body, the revision read."""

    def __call__(
        self, *, caller: Caller, data: Any = None, expected_revision: int | None = None
    ) -> BusinessCase: ...


def bodiless_act(name: str, kind: str, doc: str, change: Callable[[Write], None]) -> CaseAct:
    """The service of act `name`, which takes no body: the checks, any field refused, then
    under one transaction the checks again, `change` made to the write's case and the write
    audited as `kind`."""

    def service(
        *, caller: Caller, data: Any = None, expected_revision: int | None = None
    ) -> BusinessCase:
        precheck(caller, acts.ACTS[name], expected_revision)
        only(body(data))
        with transaction.atomic():
            write = begin(caller, acts.ACTS[name], expected_revision)
            change(write)
            return write.finish(kind)

    service.__doc__ = doc
    return service


def stamping_act(
    name: str, kind: str, doc: str, *, status: str | None = None, stamped: str | None = None
) -> CaseAct:
    """The bodiless act `name` that moves the case to `status` (if any) and stamps the time
    in the field `stamped` (if any)."""

    def change(write: Write) -> None:
        if status is not None:
            write.case.approval_status = status
        if stamped is not None:
            setattr(write.case, stamped, timezone.now())

    return bodiless_act(name, kind, doc, change)


# --- act bodies ------------------------------------------------------------------------------


def body(data: Any) -> Mapping[str, Any]:
    """An act's body: an object, or nothing."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ValidationFailed({"request": ["Must be an object."]})
    return data


def act_body(spec: type[SpecT], data: Any) -> SpecT:
    """An act's body as its declaration reads it: unknown fields refused first (422), then
    every declared field checked by its rule, absent required ones as if sent empty."""
    data = body(data)
    only(data, *specs.writable(spec))
    partial, errors = specs.validate(spec, data, creating=True)
    errors.raise_if_any()
    return partial


def body_act(
    name: str, kind: str, doc: str, spec: type[SpecT], change: Callable[[Write, SpecT], None]
) -> CaseAct:
    """The service of act `name`, whose body `spec` declares: the checks, the body read, then
    under one transaction the checks again, `change` made to the write's case with the body
    sent and the write audited as `kind`."""

    def service(
        *, caller: Caller, data: Any = None, expected_revision: int | None = None
    ) -> BusinessCase:
        precheck(caller, acts.ACTS[name], expected_revision)
        sent = act_body(spec, data)
        with transaction.atomic():
            write = begin(caller, acts.ACTS[name], expected_revision)
            change(write, sent)
            return write.finish(kind)

    service.__doc__ = doc
    return service
