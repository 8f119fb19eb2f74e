"""Create forms that create once. Each create form carries a one-time token (`FIELD`, made by
`new_token` when the form is rendered); the write it makes stores the token in its own
transaction, first, under a unique index. The same form sent again (a double click, a resend
after a lost answer, three tabs sending at once) finds the token taken and is answered with
the record the first submission created: the second insert waits on the index until the first
transaction ends, so parallel submissions create one record on PostgreSQL as on SQLite. A
submission that is refused (422) rolls its token back with everything else, so the corrected
form can be sent again. A form without a token (an older page, a script) creates as before."""

import datetime as dt
import re
import secrets
from collections.abc import Callable
from typing import TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Model
from django.http import QueryDict

from governance import periodic
from governance.errors import Conflict
from governance.models import FormSubmission

FIELD = "form_token"
_SHAPE = re.compile(r"[A-Za-z0-9_-]{16,64}")
USED_ELSEWHERE = (
    "This form was already sent from another page or by someone else. Reload the page to add "
    "another."
)

T = TypeVar("T", bound=Model)


def new_token() -> str:
    return secrets.token_urlsafe(18)


def token_of(post: QueryDict) -> str | None:
    """The form's token, or None when it sends none (or not one this app made)."""
    raw = post.get(FIELD, "")
    return raw if _SHAPE.fullmatch(raw) else None


def create_once(
    token: str | None, *, account_id: str, kind: str, create: Callable[[], T]
) -> tuple[T | None, str | None]:
    """(the record `create()` made, None), or, when this token already created one, (None,
    that record's id). Runs inside the caller's transaction: the token is written before the
    record, so a parallel submission of the same form waits for this one and then finds it.
    Conflict (409) when the token was used by someone else or for another kind of record."""
    if token is None:
        return create(), None
    with transaction.atomic():
        try:
            with transaction.atomic():
                FormSubmission.objects.create(token=token, account_id=account_id, kind=kind)
        except IntegrityError:
            row = (
                FormSubmission.objects.filter(token=token)
                .values("account_id", "kind", "target_id")
                .first()
            )
            if row is None or row["account_id"] != account_id or row["kind"] != kind:
                raise Conflict(USED_ELSEWHERE) from None
            return None, row["target_id"]
        record = create()
        FormSubmission.objects.filter(token=token).update(target_id=str(record.pk))
    return record, None


# How long a form's token is remembered: a form sent again later than this (a tab left open
# for days, then resent) creates again. The daily `form_submissions` job forgets older ones.
KEPT = dt.timedelta(days=2)


@periodic.register("form_submissions", every=dt.timedelta(days=1))
def forget_old_submissions(now: dt.datetime) -> str:
    """The `form_submissions` periodic job (daily): remove the tokens of forms sent more than
    KEPT ago, so the table holds about two days of create forms, not every form ever sent."""
    removed, _ = FormSubmission.objects.filter(created_at__lt=now - KEPT).delete()
    return f"{removed} form tokens removed"
