"""The business-case lifecycle table (docs/product.md section 2) as data: for every act, the
states it may start from, who may take it and where it leads. The services check acts against
it (403 for the wrong person, then 409 for the wrong state) and the pages offer exactly the
acts `available_acts` returns, so a button is shown only when pressing it passes both checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from charter.models import BusinessCase


from collections.abc import Callable
from dataclasses import dataclass

from charter.derive import (
    CLOSED_OR_LATER,
    amendment_change_viable,
    enabling_change,
    ever_approved,
)
from governance.errors import Conflict, Forbidden
from governance.permissions import Caller

EDITOR = "editor"
SPONSOR = "sponsor"
EDITOR_OR_SPONSOR = "editor or sponsor"
BAU_OWNER = "BAU owner"

THESIS_STATES = frozenset({"Exploring", "Draft"})

WHO_MESSAGES = {
    EDITOR: "Only the Project Lead and the editors they nominate may do this.",
    SPONSOR: "Only the sponsor (the business case's decision authority) may do this.",
    EDITOR_OR_SPONSOR: "Only an editor of this project or its sponsor may do this.",
    BAU_OWNER: "Only the BAU owner named in the close-out handover may acknowledge it.",
}


def may(caller: Caller, who: str) -> bool:
    if who == EDITOR:
        return caller.can_edit
    if who == SPONSOR:
        return caller.is_sponsor
    if who == EDITOR_OR_SPONSOR:
        return caller.can_edit or caller.is_sponsor
    if who == BAU_OWNER:
        return caller.is_bau_owner
    raise ValueError(who)


def _closeout_started(case: BusinessCase) -> str | None:
    return None if case.close_out else "Close-out has not been started."


def _closeout_not_started(case: BusinessCase) -> str | None:
    return "Close-out has already started." if case.close_out else None


def _handover_state(case: BusinessCase) -> str:
    return ((case.close_out or {}).get("bauHandover") or {}).get("state") or "Pending"


def _handover_open(case: BusinessCase) -> str | None:
    state = _handover_state(case)
    return None if state in ("Pending", "Escalated") else f"The handover is already {state}."


def _handover_pending(case: BusinessCase) -> str | None:
    state = _handover_state(case)
    return None if state == "Pending" else f"The handover is {state}, not Pending."


def _steerco_not_held(case: BusinessCase) -> str | None:
    if case.first_steerco_held_at:
        return "The first steering committee has already been held."
    return None


def _not_retired(case: BusinessCase) -> str | None:
    return "Already retired." if case.maintenance_retired_at else None


def _reopenable(case: BusinessCase) -> str | None:
    """Approved (before close-out), or a Draft amendment whose enabling change can no longer
    enable it (rejected, withdrawn or deleted): then a new change may be cited or raised."""
    if case.approval_status == "Approved":
        return _closeout_not_started(case)
    if case.version >= 2 and not amendment_change_viable(case):
        return None
    return "Only an approved business case can be re-opened for amendment."


def _amendment_enabled(case: BusinessCase) -> str | None:
    """An amendment (version 2 and up) is approved only once its enabling change is."""
    if case.version < 2:
        return None
    change = enabling_change(case)
    if change is None:
        return (
            "this amendment has no enabling change request any more; re-open it citing an "
            "approved change, or raise a new one."
        )
    if change.status != "Approved":
        return (
            f"the enabling change “{change.summary}” is {change.status}: it must be Approved "
            "before the amended business case can be approved."
        )
    return None


def _never_approved(case: BusinessCase) -> str | None:
    """Archive records 'explored, not pursued': only for a case that was never approved."""
    if ever_approved(case):
        return (
            "this business case has been approved (an amendment is in progress), so stopping "
            "it is a stop decision on a running investment: the sponsor kills it (Kill)."
        )
    return None


def _approved_or_amendment(case: BusinessCase) -> str | None:
    """Kill records 'a stop decision on a running investment': from Approved, or from Draft
    or Submitted while an approved case is being amended."""
    if case.approval_status == "Approved" or ever_approved(case):
        return None
    return "this business case was never approved; archive it instead (Archive)."


@dataclass(frozen=True)
class Act:
    name: str
    label: str
    from_states: frozenset[Any]
    who: str
    to: str | None = None  # None: the state does not change
    condition: Callable[..., Any] | None = None  # a further check of the state; returns why not
    danger: bool = False

    def state_refusal(self, case: BusinessCase) -> str | None:
        """Why the case's state does not allow this act, or None when it does."""
        if case.approval_status not in self.from_states:
            return (
                f"'{self.label}' is not possible while the business case is {case.approval_status}."
            )
        if self.condition is not None:
            reason = self.condition(case)
            if reason:
                return f"'{self.label}' is not possible now: {reason}"
        return None


def _s(*states: str) -> frozenset[Any]:
    return frozenset(states)


ACTS: dict[str, Act] = {
    act.name: act
    for act in [
        Act("draft", "Start drafting", _s("Exploring"), EDITOR, "Draft"),
        Act("submit", "Submit for approval", THESIS_STATES, EDITOR, "Submitted"),
        Act("return", "Return with notes", _s("Submitted"), SPONSOR, "Draft"),
        Act("approve", "Approve", _s("Submitted"), SPONSOR, "Approved", _amendment_enabled),
        Act(
            "reopen", "Re-open for amendment", _s("Approved", "Draft"), EDITOR, "Draft", _reopenable
        ),
        Act(
            "archive",
            "Archive",
            _s("Exploring", "Draft", "Submitted"),
            EDITOR,
            "Archived",
            _never_approved,
            danger=True,
        ),
        Act(
            "kill",
            "Kill",
            _s("Approved", "Draft", "Submitted"),
            SPONSOR,
            "Archived",
            _approved_or_amendment,
            danger=True,
        ),
        Act(
            "closeout-start", "Start close-out", _s("Approved"), EDITOR, None, _closeout_not_started
        ),
        Act(
            "closeout-submit",
            "Submit close-out",
            _s("Approved"),
            EDITOR,
            "ClosingSubmitted",
            _closeout_started,
        ),
        Act("closeout-return", "Return close-out", _s("ClosingSubmitted"), SPONSOR, "Approved"),
        Act("close", "Close", _s("ClosingSubmitted"), SPONSOR, "Closed"),
        Act(
            "handover-acknowledge",
            "Acknowledge handover",
            CLOSED_OR_LATER,
            BAU_OWNER,
            None,
            _handover_open,
        ),
        Act(
            "handover-escalate",
            "Escalate handover",
            CLOSED_OR_LATER,
            EDITOR,
            None,
            _handover_pending,
        ),
        Act(
            "realisation-start",
            "Start realisation",
            _s("Closed"),
            EDITOR_OR_SPONSOR,
            "InRealisation",
        ),
        Act("realisation-review", "Record review", _s("InRealisation"), EDITOR_OR_SPONSOR),
        Act("kpi-resolve", "Resolve KPI", _s("InRealisation"), EDITOR_OR_SPONSOR),
        Act("verdict", "Record verdict", _s("InRealisation"), SPONSOR, None),
        Act(
            "maintenance-start",
            "Enter maintenance",
            _s("Realised", "NotRealised"),
            EDITOR,
            "InMaintenance",
        ),
        Act("maintenance-retire", "Retire", _s("InMaintenance"), EDITOR, None, _not_retired),
        Act(
            "steerco-schedule",
            "Schedule first steering committee",
            _s("Exploring", "Draft", "Submitted", "Approved"),
            EDITOR,
            None,
            _steerco_not_held,
        ),
        Act(
            "steerco-confirm",
            "Confirm first steering committee held",
            _s("Approved"),
            EDITOR,
            None,
            _steerco_not_held,
        ),
    ]
}

# Edits that are not state moves, with the same two checks.
EDIT_THESIS = Act("edit", "Edit the business case", THESIS_STATES, EDITOR)
EDIT_CLOSEOUT = Act(
    "closeout-edit", "Edit close-out", _s("Approved"), EDITOR, None, _closeout_started
)
EDIT_REALISATION = Act(
    "realisation-edit", "Edit realisation", _s("InRealisation"), EDITOR_OR_SPONSOR
)
ADDRESS_NOTE = Act("address", "Mark a return note addressed", _s("Draft"), EDITOR)
ADDRESS_CLOSEOUT_NOTE = Act(
    "address-closeout",
    "Mark a close-out note addressed",
    _s("Approved"),
    EDITOR,
    None,
    _closeout_started,
)
TEMPLATE_LESSONS = Act(
    "lessons-template", "Create a lessons page", _s("Approved"), EDITOR, None, _closeout_started
)


# Separation of duties: whoever submitted the case may not decide on it.
OWN_WORK_ACTS = frozenset({"approve", "return", "kill"})
OWN_WORK_MESSAGE = (
    "You submitted this business case, so you may not {act} it: nobody approves their own "
    "work. Another sponsor must be named as the decision authority."
)


def own_work(act: Act, case: BusinessCase, caller: Caller) -> bool:
    submitter = getattr(case, "submitted_by_account_id", "")
    return act.name in OWN_WORK_ACTS and bool(submitter) and submitter == caller.account_id


def check(act: Act, case: BusinessCase, caller: Caller) -> None:
    """Forbidden (403) for the wrong person (or the case's own submitter deciding on it),
    then Conflict (409) for the wrong state."""
    if not may(caller, act.who):
        raise Forbidden(WHO_MESSAGES[act.who])
    if own_work(act, case, caller):
        raise Forbidden(OWN_WORK_MESSAGE.format(act=act.name))
    reason = act.state_refusal(case)
    if reason:
        raise Conflict(reason)


def allowed(act: Act, case: BusinessCase, caller: Caller) -> bool:
    return (
        may(caller, act.who) and not own_work(act, case, caller) and act.state_refusal(case) is None
    )


def available_acts(case: BusinessCase, caller: Caller) -> list[str]:
    """The names of the acts this person may take on this case now, in table order."""
    return [name for name, act in ACTS.items() if allowed(act, case, caller)]
