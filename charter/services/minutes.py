"""Steering committee minutes {id, title, url, pageId?, heldOn, attendees}. The first minutes
recorded set the business case's firstSteercoHeldAt (and its attendees), which completes
initiation. Decisions cite minutes (minutesRef) from this list."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.models import Project


import datetime as dt
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from django.db import transaction
from django.utils import timezone

from charter.models import BusinessCase
from charter.serializers import stored_fields
from charter.services.common import Write, lock
from charter.services.thesis import create_template_page
from charter.specs import MinutesSpec
from governance import audit, signals, specs
from governance.cleaning import FieldErrors, account_id, http_url
from governance.errors import ValidationFailed
from governance.people import resolve
from governance.permissions import Caller, require
from governance.wiki import WikiError, get_wiki
from registers.models import SteeringMinutes

ATTENDEES_MAX = 50


def clean_attendees(raw: Any, errors: FieldErrors, key: str = "attendees") -> list[str]:
    """A list of tracker accountIds, each a known tracker user, each once."""
    if raw in (None, ""):
        return []
    if not isinstance(raw, list):
        errors.add(key, "Must be a list of tracker accountIds.")
        return []
    if len(raw) > ATTENDEES_MAX:
        errors.add(key, f"At most {ATTENDEES_MAX} attendees.")
        return []
    ids: list[str] = []
    for index, value in enumerate(raw):
        cleaned, error = account_id(value)
        if error or cleaned is None:
            errors.add(f"{key}[{index}]", error or "Must be a tracker accountId.")
        elif cleaned not in ids:
            ids.append(cleaned)
    people = resolve(ids)
    for index, value in enumerate(raw):
        if isinstance(value, str) and value.strip() in people and not people[value.strip()].known:
            errors.add(f"{key}[{index}]", f"No tracker user with accountId {value.strip()}.")
    return ids


def minutes_list(project: Project) -> list[SteeringMinutes]:
    return list(SteeringMinutes.objects.filter(project=project).order_by("-held_on", "-created_at"))


def minutes_record(
    *, caller: Caller, data: Mapping[str, Any], base_url: str = ""
) -> SteeringMinutes:
    """Record a meeting's minutes (editors). The minutes point at a wiki page (pageId,
    checked), at a URL, or at a new page created from the steering-minutes template
    ("createFromTemplate": true). heldOn is required and not in the future."""
    require(caller.can_edit, "Only the Project Lead and the editors they nominate may do this.")
    if not isinstance(data, Mapping):
        raise ValidationFailed({"request": ["Must be an object."]})
    sent, errors = specs.validate(MinutesSpec, data, creating=True)
    title = sent.title or ""
    held_on = sent.held_on
    if "held_on" in sent.model_fields_set and held_on is None:
        errors.add("heldOn", specs.REQUIRED_MESSAGE)
    elif held_on is not None and held_on > timezone.localdate():
        errors.add("heldOn", "Minutes record a meeting that has been held: not a future date.")
    attendees = clean_attendees(data.get("attendees"), errors)
    page_id = sent.page_id
    from_template = data.get("createFromTemplate") is True
    url = data.get("url") or ""
    if page_id and not from_template:
        unchecked = False
        try:
            page = get_wiki().get_page(page_id, project_key=caller.project.key)
        except WikiError:
            page = None
            unchecked = True  # an outage must not block recording; the page stays unchecked
        if page is None and not unchecked:
            errors.add("pageId", f"No wiki page with id {page_id}.")
        elif page:
            url = url or urljoin(base_url, page.url)
            title = title or page.title
    if url:
        url, error = http_url(url)
        if error:
            errors.add("url", error)
    elif not from_template and not page_id:
        errors.add(
            "url", "Give the minutes' URL, pick a wiki page, or create one from the template."
        )
    if not title and not from_template:
        errors.add("title", "This field is required.")
    errors.raise_if_any()
    if from_template:
        page = create_template_page(
            caller=caller,
            template_kind="steeringMinutes",
            title=title
            or f"Steering committee minutes {held_on.isoformat()}: {caller.project.key}",
        )
        page_id, url, title = page.id, urljoin(base_url, page.url), title or page.title
    with transaction.atomic():
        project, case = lock(caller)
        minutes = SteeringMinutes.objects.create(
            project=project,
            title=title,
            url=url,
            page_id=page_id,
            held_on=held_on,
            attendees=attendees,
            created_by_account_id=caller.account_id,
        )
        audit.record_in(
            project,
            caller.account_id,
            "minutes.recorded",
            "steeringMinutes",
            minutes.pk,
            audit.diff(
                {},
                {
                    "title": title,
                    "url": url,
                    "pageId": page_id,
                    "heldOn": held_on,
                    "attendees": attendees,
                },
            ),
        )
        if case.first_steerco_held_at is None:
            _complete_initiation(caller, project, case, held_on, attendees)
    return minutes


def _complete_initiation(
    caller: Caller,
    project: Project,
    case: BusinessCase,
    held_on: dt.date,
    attendees: list[str],
) -> None:
    """The first minutes recorded: firstSteercoHeldAt := the meeting's date (start of day),
    firstSteercoAttendees := its attendees; initiation completes (once the case is approved)."""
    held_at = timezone.make_aware(dt.datetime.combine(held_on, dt.time.min))
    write = Write(caller=caller, project=project, case=case, before=stored_fields(case))
    case.first_steerco_held_at = held_at
    case.first_steerco_attendees = attendees
    write.finish("charter.steerco_held")
    if case.approved_at:
        # Initiation starts at approval; a committee that met before approval completes it
        # when the case is approved (see charter_approve).
        signals.initiation_completed.send(sender=BusinessCase, project=project, at=held_at)
