"""Editing the business case while it is Exploring or Draft: thesis, adoption inputs, seats,
steering committee, supporting links (with the wiki page-exists check and create-from-
template) and the financial case."""

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.conf import settings
from django.db import transaction

from charter import acts, finance
from charter.models import BusinessCase
from charter.services.common import Write, begin, current_case, precheck
from charter.specs import (
    MOVED_BY_ACTS,
    ROLE_MAX,
    SEATS,
    STEERING_MAX,
    CharterSpec,
    LinkFromTemplateSpec,
)
from governance import specs
from governance.cleaning import FieldErrors, text
from governance.errors import Conflict, ValidationFailed
from governance.links import (
    LABEL_MAX,
    LINKS_MAX,
    absolute,
    clean_link,
    clean_links,
    page_exists,
)
from governance.models import SiteSettings
from governance.permissions import Caller, require, sponsor_clash
from governance.seats import clean_seats, seat_account_id
from governance.services import disabled_themes, enabled_themes
from governance.wiki import TEMPLATE_KINDS, WikiError, WikiPage, get_wiki

# Who may sit where: these seats (and steering committee members) take a tracker person or an
# external person {displayName, email}; the others a tracker person only (the sponsor approves
# in the app; the close-out's BAU owner acknowledges in it). The pages offer an external
# person exactly where this allows one. External people have no accountId, so they never count
# toward the governance-group view rule (only steering members' accountIds are mirrored).
EXTERNAL_SEATS = frozenset(
    {"projectManager", "customerRep", "supplierRep", "adoptionOwner", "steeringCommittee"}
)
TRACKER_ONLY_MESSAGES = {
    "decisionAuthority": "The sponsor approves in this app: choose a person from the tracker.",
}

# --- cleaning (pure, or reads of the tracker and wiki; no writes) ----------------------------


def _clean_links(
    raw: Any, stored: list[Any], errors: FieldErrors, base_url: str, project_key: str
) -> list[dict[str, Any]]:
    links = clean_links(
        raw, "supportingLinks", errors, stored=stored, base_url=base_url, project_key=project_key
    )
    return stored if links is None else links


def clean_steering(raw: Any, errors: FieldErrors) -> list[dict[str, Any]]:
    """Members {id, accountId, displayName, role}: a tracker person (the tracker's name) or an
    external person {displayName, email}; each tracker person once."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.add("steeringCommittee", "Must be a list of members {accountId, role}.")
        return []
    if len(raw) > STEERING_MAX:
        errors.add("steeringCommittee", f"At most {STEERING_MAX} members.")
        return []
    seats_in: dict[str, Any] = {}
    extra: dict[str, tuple[str, str]] = {}
    for index, item in enumerate(raw):
        where = f"steeringCommittee[{index}]"
        member = {"accountId": item} if isinstance(item, str) else item
        if not isinstance(member, Mapping) or not (
            member.get("accountId") or member.get("displayName")
        ):
            errors.add(where, "Must be a member {accountId, role} or {displayName, email, role}.")
            continue
        for key in member:
            if key not in ("id", "accountId", "displayName", "email", "role", "avatarUrl"):
                errors.add(f"{where}.{key}", "Unknown field.")
        role, error = text(member.get("role"), max_length=ROLE_MAX)
        if error:
            errors.add(f"{where}.role", error)
        member_id = member.get("id") or str(uuid.uuid4())
        if not isinstance(member_id, str) or len(member_id) > 64:
            errors.add(f"{where}.id", "Must be a string id.")
            continue
        seat: dict[str, Any] | None = (
            {"accountId": member["accountId"]}
            if member.get("accountId")
            else {"displayName": member.get("displayName"), "email": member.get("email") or ""}
        )
        seats_in[where] = seat
        extra[where] = (member_id, role)
    seats = clean_seats(seats_in, errors)
    members, seen = [], set()
    for where in seats_in:
        seat = seats.get(where)
        if not seat:
            continue
        account_id = seat.get("accountId")
        if account_id and account_id in seen:
            errors.add(where, "This person is already on the steering committee.")
            continue
        seen.add(account_id)
        member_id, role = extra[where]
        member = {
            "id": member_id,
            "accountId": account_id,
            "displayName": seat["displayName"],
            "role": role,
        }
        if not account_id:
            member["email"] = seat.get("email", "")
        members.append(member)
    return members


def _check_financial_pages(
    financial: dict[str, Any],
    stored: Mapping[str, Any] | None,
    errors: FieldErrors,
    project_key: str,
) -> None:
    stored = finance.present(stored)
    checked: dict[str, Any] = {}
    for where, page_id, before in (
        (
            "financialCase.boardPaperPageId",
            financial["boardPaperPageId"],
            stored["boardPaperPageId"],
        ),
        (
            "financialCase.attached.pageId",
            financial["attached"]["pageId"],
            stored["attached"]["pageId"],
        ),
    ):
        if (
            page_id
            and page_id != before
            and page_exists(page_id, checked, project_key=project_key) is None
        ):
            errors.add(where, f"No wiki page with id {page_id}.")


def _check_decision_authority(
    seat: dict[str, Any] | None, case: BusinessCase, errors: FieldErrors
) -> None:
    """Separation of duties (`permissions.sponsor_clash`): the Project Lead and the nominated
    editors do the work, so none of them may be the decision authority who approves it.
    Checked when the seat changes: while cleaning, and again under the project row lock."""
    account_id = (seat or {}).get("accountId")
    if not account_id or account_id == seat_account_id(case.decision_authority):
        return
    clash = sponsor_clash(case.project, account_id)
    if clash:
        errors.add("decisionAuthority", DUTIES_MESSAGES[clash])


def _clean_theme(theme: str, stored: str, errors: FieldErrors) -> str:
    """A theme is free text, but not a disabled one of the site's themes (a case that has it
    keeps it); a site theme typed in other letters takes the site's spelling."""
    if theme.strip().casefold() == (stored or "").strip().casefold():
        return theme
    site = SiteSettings.load()
    for name in disabled_themes(site):
        if name.casefold() == theme.strip().casefold():
            errors.add("theme", f"The theme '{name}' is disabled: choose another.")
            return theme
    for name in enabled_themes(site):
        if name.casefold() == theme.strip().casefold():
            return name
    return theme


def clean_update(
    data: Mapping[str, Any], case: BusinessCase, *, base_url: str = ""
) -> dict[str, Any]:
    """Validate a PATCH body (charter.specs.CharterSpec) against the case as stored; returns
    {model attribute: value} for the fields it sets. Raises ValidationFailed naming every
    offending field."""
    errors = FieldErrors()
    for key in MOVED_BY_ACTS:
        if key in data and data[key] != getattr(case, specs.fields(CharterSpec)[key].name):
            errors.add(key, "Read-only: the lifecycle acts (POST .../charter/{act}) move it.")
    partial, errors = specs.validate(CharterSpec, data, errors=errors)
    values = specs.sent(partial)
    seats_in = {key: data[key] for key in SEATS if key in data}
    if seats_in:
        seats = clean_seats(seats_in, errors)
        for key, seat in seats.items():
            values[specs.fields(CharterSpec)[key].name] = seat
            if seat is not None and not seat.get("accountId") and key not in EXTERNAL_SEATS:
                errors.add(key, TRACKER_ONLY_MESSAGES.get(key, "Choose a person from the tracker."))
        _check_decision_authority(seats.get("decisionAuthority"), case, errors)
    if values.get("theme"):
        values["theme"] = _clean_theme(values["theme"], case.theme, errors)
    if "steering_committee" in values:
        values["steering_committee"] = clean_steering(values["steering_committee"], errors)
    if "supporting_links" in values:
        values["supporting_links"] = _clean_links(
            values["supporting_links"],
            case.supporting_links or [],
            errors,
            base_url,
            case.project.key,
        )
    if "financial_case" in values:
        financial = finance.clean(values["financial_case"], case.financial_case, errors)
        _check_financial_pages(financial, case.financial_case, errors, case.project.key)
        values["financial_case"] = financial
    errors.raise_if_any()
    return values


def _apply(write: Write, values: dict[str, Any]) -> bool:
    """Set the cleaned values; True when anything changed."""
    case = write.case
    changed = False
    for attr, value in values.items():
        if attr == "financial_case":
            if case.financial_case is not None and finance.storable(case.financial_case) == value:
                continue
            value = finance.stamped(value, case.financial_case)
        if getattr(case, attr) != value:
            setattr(case, attr, value)
            changed = True
    return changed


def charter_update(
    *,
    caller: Caller,
    data: Mapping[str, Any],
    expected_revision: int | None = None,
    base_url: str = "",
) -> BusinessCase:
    """Edit thesis, adoption inputs, seats, links and financial case (Exploring or Draft,
    editors). Stamps updatedAt and updatedByAccountId; an edit that changes nothing writes
    nothing."""
    case = precheck(caller, acts.EDIT_THESIS, expected_revision)
    if not isinstance(data, Mapping):
        raise ValidationFailed({"request": ["Must be an object."]})
    values = clean_update(data, case, base_url=base_url)
    with transaction.atomic():
        write = begin(caller, acts.EDIT_THESIS, expected_revision)
        if "decision_authority" in values:
            # The editors list may have changed since cleaning; it cannot now (the lock).
            errors = FieldErrors()
            _check_decision_authority(values["decision_authority"], write.case, errors)
            errors.raise_if_any()
        if _apply(write, values):
            return write.finish("charter.updated")
        return write.case


# --- list members, one at a time (no revision needed: they merge under the lock) -------------


def link_add(*, caller: Caller, link: Mapping[str, Any], base_url: str = "") -> BusinessCase:
    """Append one supporting link (a plain link, or a wiki page picked in the picker)."""
    case = precheck(caller, acts.EDIT_THESIS)
    errors = FieldErrors()
    if len(case.supporting_links or []) >= LINKS_MAX:
        errors.add("supportingLinks", f"At most {LINKS_MAX} links.")
    cleaned = clean_link(
        {**link, "id": None},
        "link",
        errors,
        known_page_ids=set(),
        base_url=base_url,
        checked={},
        project_key=caller.project.key,
    )
    errors.raise_if_any()
    with transaction.atomic():
        write = begin(caller, acts.EDIT_THESIS, None)
        write.case.supporting_links = [*(write.case.supporting_links or []), cleaned]
        return write.finish("charter.updated")


def _remove_entry(
    caller: Caller, attr: str, entry_id: str | None, missing: dict[str, list[str]]
) -> BusinessCase:
    """Take the entry with `entry_id` out of the case's list `attr` (its supporting links, its
    steering committee); `missing` is the refusal when the list has no such entry."""
    precheck(caller, acts.EDIT_THESIS)
    with transaction.atomic():
        write = begin(caller, acts.EDIT_THESIS, None)
        entries = getattr(write.case, attr) or []
        kept = [entry for entry in entries if entry.get("id") != entry_id]
        if len(kept) == len(entries):
            raise ValidationFailed(missing)
        setattr(write.case, attr, kept)
        return write.finish("charter.updated")


def link_remove(*, caller: Caller, link_id: str) -> BusinessCase:
    return _remove_entry(
        caller, "supporting_links", link_id, {"linkId": ["No such supporting link."]}
    )


def steering_member_add(*, caller: Caller, member: Mapping[str, Any]) -> BusinessCase:
    precheck(caller, acts.EDIT_THESIS)
    errors = FieldErrors()
    cleaned = clean_steering([dict(member)], errors)
    if errors:
        raise ValidationFailed(
            {k.replace("steeringCommittee[0]", "member"): v for k, v in errors.items()}
        )
    with transaction.atomic():
        write = begin(caller, acts.EDIT_THESIS, None)
        members = write.case.steering_committee or []
        account_id = cleaned[0]["accountId"]
        if account_id and any(m.get("accountId") == account_id for m in members):
            raise ValidationFailed({"member": ["This person is already on the committee."]})
        if len(members) >= STEERING_MAX:
            raise ValidationFailed({"member": [f"At most {STEERING_MAX} members."]})
        write.case.steering_committee = [*members, cleaned[0]]
        return write.finish("charter.updated")


def steering_member_remove(*, caller: Caller, member_id: str | None) -> BusinessCase:
    return _remove_entry(
        caller,
        "steering_committee",
        member_id,
        {"memberId": ["No such steering committee member."]},
    )


# --- create from template --------------------------------------------------------------------

TEMPLATE_BODIES = {
    "boardPaper": (
        "Board paper for {name} ({key}).\n\n1. The business problem\n2. The outcome and the "
        "return expected\n3. Scope and its boundaries\n4. Adoption: who is affected, the KPI, "
        "the owner\n5. The financial case\n6. The decision requested"
    ),
    "steeringMinutes": (
        "Steering committee minutes for {name} ({key}).\n\nAttendees\nDecisions taken\n"
        "Actions\nRisks and issues raised"
    ),
    "lessons": (
        "Lessons learned from {name} ({key}).\n\nWhat worked\nWhat we would do differently\n"
        "Advice for the next sponsor"
    ),
}


def create_template_page(*, caller: Caller, template_kind: str, title: str = "") -> WikiPage:
    """Create a wiki page from a template (board paper, steering minutes, lessons) in the
    configured space, with the PMO label and the kind's canonical label. An outbound call:
    callers make it before their transaction."""
    if not isinstance(template_kind, str) or template_kind not in TEMPLATE_KINDS:
        raise ValidationFailed({"templateKind": [f"Must be one of: {', '.join(TEMPLATE_KINDS)}."]})
    title, error = text(title, max_length=LABEL_MAX)
    if error:
        raise ValidationFailed({"title": [error]})
    prefix, label = TEMPLATE_KINDS[template_kind]
    project = caller.project
    title = title or f"{prefix}: {project.name} ({project.key})"
    try:
        return get_wiki().create_page(
            space_key=settings.WIKI_SPACE_KEY,
            title=title,
            body=TEMPLATE_BODIES[template_kind].format(name=project.name, key=project.key),
            labels=[settings.WIKI_PMO_LABEL, label],
            project_key=project.key,
        )
    except WikiError as exc:
        raise Conflict(
            f"The wiki could not create the page ({exc}). Nothing was changed; try again."
        ) from exc


DUTIES_MESSAGES = {
    "lead": (
        "The Project Lead cannot be the decision authority: nobody approves their own work. "
        "Name a sponsor who is neither the lead nor an editor."
    ),
    "editor": (
        "An editor of this project cannot be its decision authority: nobody approves their "
        "own work. Remove them as editor first, or name someone else."
    ),
}

TEMPLATE_ACTS = {"boardPaper": acts.EDIT_THESIS, "lessons": acts.TEMPLATE_LESSONS}


def link_from_template(
    *,
    caller: Caller,
    template_kind: Any,
    title: Any = "",
    base_url: str = "",
    extra_fields: Iterable[str] = (),
) -> tuple[BusinessCase, dict[str, Any]]:
    """Create a board paper (Exploring or Draft) or a lessons page (during close-out) from its
    template and add it to the supporting links; a board paper also becomes the financial
    case's boardPaperPageId when none is set. Steering minutes are created from the minutes
    form instead. `extra_fields`: every key of the request body, so unknown ones are refused
    (after the person and state checks)."""
    require(caller.can_edit, acts.WHO_MESSAGES[acts.EDITOR])
    act = TEMPLATE_ACTS.get(template_kind) if isinstance(template_kind, str) else None
    if act is None:
        # The kind names the act, so the state is judged before the kind: when neither kind
        # may be created now, the answer is the state's (409), not the body's (422).
        case = current_case(caller.project)
        if all(a.state_refusal(case) for a in TEMPLATE_ACTS.values()):
            raise Conflict(
                "No page can be created from a template now: a board paper while the business "
                "case is Exploring or Draft, a lessons page during close-out."
            )
        raise ValidationFailed(
            {
                "templateKind": [
                    "Must be boardPaper or lessons (minutes come from the minutes page)."
                ]
            }
        )
    precheck(caller, act)
    unknown = sorted(set(extra_fields) - set(specs.writable(LinkFromTemplateSpec)))
    if unknown:
        raise ValidationFailed({name: ["Unknown field."] for name in unknown})
    page = create_template_page(caller=caller, template_kind=template_kind, title=title)
    link = {
        "id": str(uuid.uuid4()),
        "label": page.title,
        "url": absolute(page.url, base_url),
        "type": "confluence",
        "pageId": page.id,
        "templateKind": template_kind,
    }
    if page.space_key:
        link["spaceKey"] = page.space_key
    with transaction.atomic():
        write = begin(caller, act, None)
        case = write.case
        case.supporting_links = [*(case.supporting_links or []), link]
        if template_kind == "boardPaper":
            stored = case.financial_case or {}
            if not finance.present(stored)["boardPaperPageId"]:
                value = {**finance.storable(stored), "boardPaperPageId": page.id}
                case.financial_case = finance.stamped(value, stored)
        return write.finish("charter.updated"), link
