"""A bulk edit of a register: the same few fields (status, owner, RAG) set on several rows at
once, through the register's own update service row by row (its rules, its revision check,
its audit entry per row), inside one transaction: every row is written, or none is."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from governance import labels, signals
from governance.errors import Conflict, DomainError, NotFound, Stale, ValidationFailed
from governance.permissions import Caller
from registers.services.common import batch

# The most rows one bulk edit takes: a page of the register, with room to spare.
BULK_MAX = 500
STALE_MESSAGE = "someone changed it since the page was loaded; reload the page and try again."


@dataclass(frozen=True)
class BulkRow:
    """One selected row: its id, the revision the page showed, and its name for messages."""

    pk: Any
    revision: int | None
    name: str = ""


@dataclass(frozen=True)
class Refusal:
    """Why one row was refused: the row's name and, per field label, the reasons."""

    name: str
    reasons: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.name}: {' '.join(self.reasons)}"


class BulkRefused(ValidationFailed):
    """At least one row was refused; nothing was written. `refusals` names each row and why
    (a validation failure of the edit as a whole: 422, the fields keyed by the rows' names)."""

    default_message = "Nothing was changed: some of the selected rows cannot take this edit."

    def __init__(self, refusals: Sequence[Refusal]) -> None:
        self.refusals = list(refusals)
        super().__init__({refusal.name: list(refusal.reasons) for refusal in self.refusals})


Update = Callable[..., Any]


def _reasons(exc: DomainError, field_labels: Mapping[str, str]) -> tuple[str, ...]:
    if isinstance(exc, Stale):
        return (f"Not changed: {STALE_MESSAGE}",)
    if isinstance(exc, ValidationFailed) and exc.fields:
        return tuple(
            f"{field_labels.get(field, labels.label(field))}: {labels.in_message(message)}"
            for field, messages in exc.fields.items()
            for message in messages
        )
    return (labels.in_message(exc.message),)


def bulk_update(
    *,
    caller: Caller,
    update: Update,
    rows: Sequence[BulkRow],
    data: Mapping[str, Any],
    field_labels: Mapping[str, str],
) -> list[Any]:
    """Apply `data` to every row in `rows` with `update(caller=, pk=, data=, expected_revision=)`
    (the register's single-edit service), in one transaction. The editor and frozen checks
    come first, for the whole edit (403 / 409 as a single edit answers). Each row is then
    checked and written as a single edit is (a refused row rolls back to its own savepoint),
    and when any row was refused the whole edit is undone and BulkRefused names every
    refused row with the field labels and reasons."""
    updated: list[Any] = []
    refusals: list[Refusal] = []
    # One lock and one freeze check for the whole edit (`batch`: the editor and frozen checks
    # first, 403 / 409 as a single edit answers), the audit entries written together, and the
    # project's derived facts (its health, the pages' revision) announced once at the end.
    with transaction.atomic(), signals.deferred_project_changes(), batch(caller):
        if not data:
            raise ValidationFailed(fields={"": ["Choose at least one field to change."]})
        if not rows:
            raise ValidationFailed(fields={"": ["Select at least one row."]})
        if len(rows) > BULK_MAX:
            raise ValidationFailed(fields={"": [f"Select at most {BULK_MAX} rows at once."]})
        for row in rows:
            try:
                updated.append(
                    update(
                        caller=caller,
                        pk=row.pk,
                        data=dict(data),
                        expected_revision=row.revision,
                    )
                )
            except (ValidationFailed, Stale, Conflict, NotFound) as exc:
                refusals.append(Refusal(row.name or str(row.pk), _reasons(exc, field_labels)))
        if refusals:  # raised inside the transaction: every row written so far is undone
            raise BulkRefused(refusals)
    return updated
