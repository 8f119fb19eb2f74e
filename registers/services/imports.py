"""Bulk import of a register: all rows or none. Each row goes through the register's own
create service, its steps (`Creator`: check, claim, then write) without a savepoint per row
(imported rows are marked imported); any refused row refuses the file. The preview runs the
same steps but the write: every check the import makes, nothing written."""

import dataclasses
import functools
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from governance import audit, cleaning, signals, specs
from governance.errors import Conflict, ValidationFailed
from governance.models import Project
from governance.permissions import Caller
from governance.roster import project_people
from registers import mspdi, spreadsheets, uploads
from registers.services.changes import build_change, write_change
from registers.services.common import batch, require_editor
from registers.services.decisions import build_decision, write_decision
from registers.services.risks import build_risk, write_risk
from registers.services.work_packages import (
    build_work_package,
    claim_work_package,
    write_work_package,
)
from registers.specs import (
    PREVIEW_FIELDS,
    ChangeSpec,
    DecisionSpec,
    RiskSpec,
    WorkPackageSpec,
)

REGISTERS = ["work-packages", "risks", "decisions", "changes"]


def _nothing_to_claim(project: Project, record: Any) -> None:
    return None


@dataclasses.dataclass(frozen=True)
class Creator:
    """A register's create service in its steps: `build` checks a row into a new record
    (ValidationFailed, nothing written), `claim` takes from the batch's later rows what the
    record will hold (a work package's name, id and linked issues: their checks read the
    batch's claims, not the stored rows, so a preview that writes nothing checks them as the
    import does), `write` inserts it with its audit entry (queued inside `batch()`). The
    single-record create service is `write(build(...))`."""

    build: Callable[[Caller, Project, dict[str, Any]], Any]
    write: Callable[[Caller, Project, Any], Any]
    claim: Callable[[Project, Any], None] = _nothing_to_claim


CREATORS: dict[str, Creator] = {
    # The work-package record has no `imported` field in the spec.
    "work-packages": Creator(build_work_package, write_work_package, claim_work_package),
    "risks": Creator(lambda c, p, d: build_risk(c, p, d, imported=True), write_risk),
    "decisions": Creator(lambda c, p, d: build_decision(c, p, d, imported=True), write_decision),
    "changes": Creator(lambda c, p, d: build_change(c, p, d, imported=True), write_change),
}

# What the preview lists of each row it would create: the register's declaration and the
# fields a person checks first (named there); at most PREVIEW_ROWS rows are listed.
PREVIEWED: dict[str, tuple[type[specs.Spec], list[str]]] = {
    "work-packages": (WorkPackageSpec, PREVIEW_FIELDS["work-packages"]),
    "risks": (RiskSpec, PREVIEW_FIELDS["risks"]),
    "decisions": (DecisionSpec, PREVIEW_FIELDS["decisions"]),
    "changes": (ChangeSpec, PREVIEW_FIELDS["changes"]),
}
PREVIEW_ROWS = 500


def preview_columns(register: str) -> list[tuple[str, str]]:
    """(API name, label) of the fields the preview lists, labelled by the declaration."""
    spec, names = PREVIEWED[register]
    labels = specs.labels(spec)
    return [(name, labels.get(name, name)) for name in names]


@dataclasses.dataclass
class ImportOutcome:
    """What an import does (or, in a preview, would do): `created` rows, the refused cells
    and rows (`errors`, [{row, field, message}]), and `warnings` ([{row, field, message}]) for
    every value read in a way the person might not expect: an amount or a date read from a
    spreadsheet's writing, a number coerced by the field's rule, a pending decision recorded
    as made today, a read-only column ignored (row 1). `digest` identifies the outcome: the
    file's bytes, the register, the rows read and the warnings, so a commit can be refused
    when it would differ from the preview the person saw."""

    register: str
    created: int
    errors: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    digest: str
    # The first PREVIEW_ROWS records the file makes, as the register stores them:
    # [{row, values: {API name: value}}] (the fields of PREVIEWED).
    listed: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def preview(self) -> dict[str, Any]:
        return {
            "register": self.register,
            "create": 0 if self.errors else self.created,
            "rows": self.created,
            "errors": self.errors,
            "warnings": self.warnings,
            "createRows": [] if self.errors else self.listed,
            "previewDigest": self.digest,
        }


PENDING_MADE_TODAY = (
    "Empty: recorded as made today ({today}), because an imported decision is one already "
    "taken (the requirements' rule for historical rows). Give the date it was made, or add "
    "a pending decision on the register's page."
)
UTF16_MESSAGE = (
    "This file is saved as UTF-16 text, which cannot be read here. Save a spreadsheet as "
    "'CSV UTF-8' or as an XLSX workbook, or a plan from Microsoft Project as 'XML Format "
    "(*.xml)' in UTF-8, and import that file."
)
STALE_PREVIEW = (
    "This import would now differ from the preview you checked (the file, the register or "
    "the values it reads have changed since). Nothing was imported: preview the file again."
)
OTHER_PREVIEW = (
    "This previewDigest is of a preview made {made}, not of this import into {key}'s "
    "{register}: a preview answers only for the person who made it, in the project and "
    "register it was made in. Nothing was imported: preview the file here and send that "
    "preview's digest."
)
# A preview's digest: 40 hex digits of the outcome, then who it is for (6 of the project, 4
# of the register, 6 of the person) and 8 of a MAC over the rest, keyed by the site's secret,
# so a digest this site made says which of the three differs (and a made-up one says none).
_PARTS = (("project", 40, 46), ("register", 46, 50), ("person", 50, 56))
_MADE = {
    "project": "in another project",
    "register": "for another register",
    "person": "by another person",
}


def _tag(kind: str, value: Any, width: int) -> str:
    return hashlib.sha256(f"{kind}:{value}".encode()).hexdigest()[:width]


def _mac(body: str) -> str:
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, b"preview-digest:" + body.encode(), hashlib.sha256).hexdigest()[:8]


def preview_digest(outcome: str, caller: Caller, register: str) -> str:
    """The digest a preview answers and its commit must send back (see `_PARTS`)."""
    body = (
        outcome[:40]
        + _tag("project", caller.project.pk, 6)
        + _tag("register", register, 4)
        + _tag("person", caller.account_id, 6)
    )
    return body + _mac(body)


def digest_refusal(expected: str, digest: str, caller: Caller, register: str) -> Conflict:
    """The 409 of a commit whose previewDigest is not this import's: made for another
    project, register or person (said so), else the import would now differ."""
    genuine = len(expected) == 64 and expected.isascii()
    if genuine and hmac.compare_digest(_mac(expected[:56]), expected[56:]):
        for part, start, end in _PARTS:
            if expected[start:end] != digest[start:end]:
                return Conflict(
                    OTHER_PREVIEW.format(
                        made=_MADE[part], key=caller.project.key, register=register
                    )
                )
    return Conflict(STALE_PREVIEW)


def register_import(*, caller: Caller, register: str, upload: Any) -> int:
    """Create one record per row of the uploaded file, all or none (see `import_file`)."""
    return import_file(caller=caller, register=register, upload=upload).created


def import_preview(
    *, caller: Caller, register: str, upload: Any, outline_level: Any = None, plan: bool = False
) -> ImportOutcome:
    """What `import_file` would do with this file, nothing written: the same checks in the
    same order (403, 409, then the file), every row through its create service's checks and
    claims (`Creator`), no row inserted. A file that cannot be read at all is 422; refused
    rows are listed in the outcome's `errors` rather than raised. `plan`: see `read_upload`."""
    return _run(
        caller, register, upload, dry_run=True, expected=None, level=outline_level, plan=plan
    )


def import_file(
    *,
    caller: Caller,
    register: str,
    upload: Any,
    expected_digest: str | None = None,
    outline_level: Any = None,
    plan: bool = False,
) -> ImportOutcome:
    """Create one record per row of the uploaded CSV or XLSX file, or of the Microsoft
    Project plan (MSPDI XML, work packages only: `registers.mspdi`, its tasks at
    `outline_level` become the rows) (`upload`: an uploaded file, or None), in one
    transaction. The editor check (403) and the freeze check (409) come before the file is
    read; a file that cannot be read, or refused rows, answer 422 (rows reported as [{row,
    field, message}] on the error's `rows`, the warnings on its `warnings`), and nothing is
    created. With `expected_digest` (a preview's), an import whose outcome differs from that
    preview is refused (409) and nothing is created. `plan`: see `read_upload`."""
    return _run(
        caller,
        register,
        upload,
        dry_run=False,
        expected=expected_digest,
        level=outline_level,
        plan=plan,
    )


def read_upload(
    register: str,
    upload: Any,
    outline_level: Any = None,
    *,
    plan: bool = False,
    project: Project | None = None,
) -> uploads.Reading:
    """The rows of an import file, by what the file is: a Microsoft Project plan (XML) for
    the work packages, an .mpp refused with the way to save it as XML, else CSV or XLSX.
    `plan`: the file is meant as a plan (the assistant's plan import), so whatever does not
    start as XML is refused in the plan reader's words, never read as CSV. `project`: whose
    people the file's person cells name (`governance.roster.project_people`, loaded once)."""
    if upload is not None and upload.size <= uploads.MAX_BYTES:
        head = upload.read(64)
        upload.seek(0)
        if mspdi.is_mpp(head):
            name = (getattr(upload, "name", "") or "").lower()
            message = mspdi.MPP_MESSAGE if name.endswith(".mpp") else mspdi.OLE2_MESSAGE
            if register == "work-packages" and not name.endswith(".xls"):
                message = mspdi.MPP_MESSAGE
            raise ValidationFailed({"file": [message]})
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ValidationFailed({"file": [UTF16_MESSAGE]})
        if plan or mspdi.is_xml(head):
            if register != "work-packages":
                raise ValidationFailed({"file": [mspdi.ONLY_WORK_PACKAGES]})
            return mspdi.read_file(upload, outline_level)
    if plan:  # no file, or one over the size limit: the plan reader's words
        return mspdi.read_file(upload, outline_level)
    people = functools.partial(project_people, project) if project is not None else None
    return spreadsheets.read_file(register, upload, people)


def _run(
    caller: Caller,
    register: str,
    upload: Any,
    *,
    dry_run: bool,
    expected: str | None,
    level: Any = None,
    plan: bool = False,
) -> ImportOutcome:
    require_editor(caller)
    caller.project.assert_registers_unfrozen()
    create = CREATORS[register]
    reading = read_upload(register, upload, level, plan=plan, project=caller.project)
    if not reading.rows and not reading.problems:
        raise ValidationFailed({"file": ["The file has no rows to import under its header."]})
    problems: list[dict[str, Any]] = list(reading.problems)
    warnings: list[dict[str, Any]] = list(reading.notes)
    unreadable_rows = {p["row"] for p in problems}
    total = len({number for number, _ in reading.rows} | unreadable_rows)
    fingerprint: dict[str, Any] = {
        "register": register,
        "project": caller.project.pk,
        "person": caller.account_id,
        "file": reading.digest,
        "rows": [],
    }
    today = timezone.localdate().isoformat()
    spec, shown = PREVIEWED[register]
    listed: list[dict[str, Any]] = []
    # The project is locked once (an import; its preview only checks it), the records and
    # their audit entries are written in multi-row statements after the last row, and the
    # project's health is derived once. No savepoint per row: a row is checked (`build`,
    # which writes nothing) before its record and entry are queued, so a refused row leaves
    # nothing to undo. The preview stops before `write`: it never inserts a row.
    with (
        transaction.atomic(),
        signals.deferred_project_changes(),
        batch(caller, write=not dry_run) as project,
    ):
        for number, data in reading.rows:
            fingerprint["rows"].append([number, audit.jsonable(data)])
            if number in unreadable_rows:
                continue
            with cleaning.noting_coercions() as coerced:
                try:
                    record = create.build(caller, project, data)
                except ValidationFailed as exc:
                    for field, messages in exc.fields.items():
                        problems.extend(
                            {"row": number, "field": field, "message": message}
                            for message in messages
                        )
                    continue
                create.claim(project, record)
                if not dry_run:
                    create.write(caller, project, record)
                if len(listed) < PREVIEW_ROWS:
                    listed.append({"row": number, "values": specs.to_dict(spec, record, shown)})
            warnings.extend(
                {"row": number, "field": note["field"], "message": note["message"]}
                for note in coerced
            )
            if register == "decisions" and not data.get("madeOn"):
                warnings.append(
                    {
                        "row": number,
                        "field": "madeOn",
                        "message": PENDING_MADE_TODAY.format(today=today),
                    }
                )
        problems.sort(key=lambda p: p["row"])
        warnings.sort(key=lambda w: w["row"])
        fingerprint["warnings"] = warnings
        digest = preview_digest(
            hashlib.sha256(
                json.dumps(fingerprint, sort_keys=True, ensure_ascii=True, default=str).encode()
            ).hexdigest(),
            caller,
            register,
        )
        outcome = ImportOutcome(register, total, problems, warnings, digest, listed)
        if dry_run:
            return outcome
        if problems:
            failed = len({p["row"] for p in problems})
            raise ValidationFailed(
                {"file": [f"{failed} of {total} rows have errors; nothing was imported."]},
                rows=problems,
                warnings=warnings,
            )
        if expected is not None and expected != digest:
            raise digest_refusal(expected, digest, caller, register)
    return outcome
