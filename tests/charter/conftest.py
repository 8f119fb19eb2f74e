"""Arranging business cases in any state (plain model writes, then the mirror), and callers."""

import pytest
from django.utils import timezone

from charter.models import BusinessCase
from charter.services import sync_mirror
from charter.services.closeout import empty_closeout
from governance.permissions import caller_for


def seat(user) -> dict:
    return {"accountId": user.account_id, "displayName": "x", "avatarUrl": ""}


def complete_inputs(cast) -> dict:
    return {
        "adoption_affected": "Branch staff in 40 offices",
        "adoption_kpi": "80% of staff use the portal weekly by Q3",
        "change_saturation": "Modest",
        "adoption_owner": seat(cast.editor),
        "decision_authority": seat(cast.sponsor),
    }


def closeout_record(owner=None) -> dict:
    record = empty_closeout(timezone.now())
    if owner is not None:
        record["bauHandover"]["ownerAccountId"] = owner.account_id
    return record


@pytest.fixture
def arrange(cast):
    """arrange(status, **fields): the cast's business case in that state, mirror in sync."""

    def make(status: str = "Draft", **fields) -> BusinessCase:
        values = {**complete_inputs(cast), "approval_status": status, **fields}
        case, _ = BusinessCase.objects.update_or_create(project=cast.project, defaults=values)
        project = cast.project
        sync_mirror(project, case)
        project.refresh_from_db()
        return case

    return make


@pytest.fixture
def as_(cast):
    """as_(user): the user's Caller on the cast's project, freshly computed."""

    def make(user):
        cast.project.refresh_from_db()
        return caller_for(user, cast.project)

    return make
