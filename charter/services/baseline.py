"""Applying an approved change request to its work package's baseline: the act that clears a
Scope, Quality or Other change anchored to one package without re-opening the whole business
case (docs/product.md section 3)."""

import datetime as dt
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from charter.serializers import stored_fields
from charter.services.common import Write, lock
from governance import signals
from governance.cleaning import FieldErrors, add_days, decimal_to_json
from governance.concurrency import check_version
from governance.errors import Conflict
from governance.permissions import Caller, require
from registers.derive import change_application_state, change_awaits_baseline
from registers.models import ChangeRequest, WorkPackage
from registers.services import change_apply, work_package_baseline, work_package_for_update
from registers.services.common import get_in_project, refuse_members

LEAD_ONLY = "Only the Project Lead may apply a change to a work package's baseline."


def _moved(value: str | None, days: int) -> str | None:
    if not value or not days:
        return value
    return add_days(dt.date.fromisoformat(value), days).isoformat()


def change_apply_to_baseline(
    *,
    caller: Caller,
    change_id: Any,
    expected_revision: int | None = None,
    other_members: Iterable[str] = (),
) -> ChangeRequest:
    """The Project Lead applies an Approved change awaiting application that names a work
    package to that package's baseline: in the business case's planBaseline the package's
    plannedEndDate moves by impactScheduleDays (its start stays) and its budget (and the
    plan's totalBudget) by impactBudget; the package's budgetBaseline follows; the change is
    stamped applicationRecord {kind: 'baseline', ref: the package id, at, by}, so it reads
    Applied. The package's own plannedEndDate moves with its baseline when it still held the
    old baseline end (a plan the lead already re-planned stays as set), so it does not read
    re-planned after an approved change. Refused in the house order: not the lead (403),
    frozen registers, the wrong state, no plan baseline or no baseline entry for the package
    (409), a stale revision (412), then any member of the request body (it takes none: 422)."""
    require(caller.may_apply_change_to_baseline, LEAD_ONLY)
    with transaction.atomic(), signals.deferred_project_changes():
        project, case = lock(caller)
        change = get_in_project(ChangeRequest, project, change_id)
        project.assert_registers_unfrozen()
        if not change_awaits_baseline(change):
            state = change_application_state(change)
            if state == "AwaitingApplication":
                raise Conflict(
                    f"“{change.summary}” names no work package: choose one on the change "
                    "first, or apply it by re-opening the business case."
                )
            raise Conflict(
                "Only an approved change awaiting application can be applied to a baseline; "
                f"“{change.summary}” is {_state_words(state)}."
            )
        if case.approval_status != "Approved":
            raise Conflict(
                "A change is applied to a work package's baseline while the business case is "
                f"Approved; it is {case.approval_status} now."
            )
        if str(change.pk) == str(case.amendment_enabled_by_change_id or ""):
            # Its application is the amended case's approval (applicationRecord 'charter').
            raise Conflict(
                f"“{change.summary}” enables the amendment of the business case: it is applied "
                "when the amended case is approved."
            )
        check_version(change.revision, expected_revision, current_repr=change)
        errors = FieldErrors()
        refuse_members(errors, other_members)
        errors.raise_if_any()
        plan = case.plan_baseline if isinstance(case.plan_baseline, dict) else None
        entries = (plan or {}).get("workPackages")
        if not plan or not isinstance(entries, dict):
            raise Conflict(
                "The business case has no approved plan baseline yet: a change is applied to "
                "a work package's baseline once the case is approved."
            )
        package_id = str(change.target_work_package_id)
        package = work_package_for_update(project, change.target_work_package_id)
        if package is None:
            raise Conflict(
                f"The work package “{change.summary}” names no longer exists: choose another "
                "one, or apply the change by re-opening the business case."
            )
        entry = entries.get(package_id)
        if not isinstance(entry, dict):
            raise Conflict(
                f"“{package.name}” is not in the approved plan baseline (it was added after "
                "approval): re-open the business case to baseline it with this change."
            )
        days = change.impact_schedule_days or 0
        budget_delta = change.impact_budget or Decimal(0)
        if days and not entry.get("plannedEndDate"):
            raise Conflict(
                f"“{package.name}” has no baselined end date to move by {days} days: re-open "
                "the business case to baseline its dates."
            )
        baselined_budget = entry.get("budget")
        if budget_delta and baselined_budget is None:
            raise Conflict(
                f"“{package.name}” has no baselined budget to change: re-open the business "
                "case to baseline it."
            )
        write = Write(caller=caller, project=project, case=case, before=stored_fields(case))
        new_entry = dict(entry)
        new_entry["plannedEndDate"] = _moved(entry.get("plannedEndDate"), days)
        new_budget = None
        if baselined_budget is not None:
            new_budget = Decimal(str(baselined_budget)) + budget_delta
            new_entry["budget"] = decimal_to_json(new_budget)
        new_plan = {**plan, "workPackages": {**entries, package_id: new_entry}}
        if budget_delta and plan.get("totalBudget") is not None:
            new_plan["totalBudget"] = decimal_to_json(
                Decimal(str(plan["totalBudget"])) + budget_delta
            )
        case.plan_baseline = new_plan
        now = timezone.now()
        work_package_baseline(
            caller,
            project,
            package,
            package.budget_baseline if new_budget is None else new_budget,
            planned_end=_plan_follows(package, entry, new_entry),
        )
        change_apply(caller, project, change, kind="baseline", ref=package_id, at=now)
        write.finish(
            "charter.baseline_changed",
            extra={"appliedChange": {"before": None, "after": str(change.pk)}},
        )
    return change


def _plan_follows(
    package: WorkPackage, entry: dict[str, Any], new_entry: dict[str, Any]
) -> dt.date | None:
    """The package's new plannedEndDate when the change moves its baseline end and the plan
    still held the old baseline end (so the package does not read re-planned after an approved
    change); None leaves a plan the lead has already re-planned as it is."""
    old_end, new_end = entry.get("plannedEndDate"), new_entry.get("plannedEndDate")
    if not old_end or not new_end or old_end == new_end:
        return None
    if package.planned_end_date is None or package.planned_end_date.isoformat() != old_end:
        return None
    end = dt.date.fromisoformat(new_end)
    if package.planned_start_date and end < package.planned_start_date:
        return None
    return end


def _state_words(state: str) -> str:
    return {
        "Proposed": "still proposed",
        "Rejected": "rejected",
        "Withdrawn": "withdrawn",
        "Applied": "already applied",
    }.get(state, state)
