"""Importing a register from a CSV or XLSX file: preview, then commit, and the downloadable
template of the columns each register takes.

The upload is previewed first (every row through its create service, rolled back): rows to
create, refused rows, and a warning for each value read in a way the person might not expect.
The file is kept for a short while under a token tied to the person, the project and the
register; confirming imports that file, and is refused when the import would now do anything
else than the preview showed (the outcome's digest). A person keeps at most
PREVIEWS_PER_PERSON previews (each up to the 5 MB of its file) in the shared cache: each
takes one of the person's slots in turn, so a new preview replaces the oldest, and
confirming a replaced one says so."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


import datetime as dt
import secrets

from django.contrib import messages
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from governance import formatting, permissions
from governance.errors import Conflict, ValidationFailed
from governance.http import HtmxHttpRequest, page
from registers import import_templates, mspdi, services, spreadsheets, vocabulary
from registers.services.imports import preview_columns
from registers.views import base

PREVIEW_SECONDS = 30 * 60
PREVIEWS_PER_PERSON = 3
PREVIEW_EXPIRED = (
    "This preview has expired or was already imported. Choose the file again to preview it."
)
PREVIEW_REPLACED = (
    f"This preview was replaced by a newer one: each person keeps at most "
    f"{PREVIEWS_PER_PERSON} import previews at a time, for {PREVIEW_SECONDS // 60} minutes, "
    "and a new one takes the place of the oldest. Choose the file again to preview it."
)


def _key(account: str, slot: int) -> str:
    return f"registers:import-preview:{account}:{slot}"


def _next_slot(account: str) -> int:
    """The person's slot for a new preview, in turn (the count is atomic in the cache)."""
    counter = f"registers:import-previews:{account}"
    cache.add(counter, 0, PREVIEW_SECONDS)
    try:
        return cache.incr(counter) % PREVIEWS_PER_PERSON
    except ValueError:  # the count expired in between, or the cache cannot be reached
        return 0


def _stored(account: str, token: str) -> tuple[dict[str, Any] | None, str]:
    """The preview a token names, if it is the person's and still kept, else the refusal."""
    slot, _, _ = token.partition("-")
    number = int(slot) if slot.isascii() and slot.isdigit() and len(slot) < 3 else -1
    if len(token) >= 100 or not 0 <= number < PREVIEWS_PER_PERSON:
        return None, PREVIEW_EXPIRED
    stored = cache.get(_key(account, number))
    if not stored:
        return None, PREVIEW_EXPIRED
    if stored.get("token") != token:
        return None, PREVIEW_REPLACED
    return stored, ""


@page("GET", "POST")
def import_file(request: HtmxHttpRequest, key: str, register: str) -> HttpResponse:
    """GET: the upload form. POST with a file: the preview. POST with a preview's token: the
    import of that file, all rows or none."""
    project, caller = permissions.editable_project_for(request, key)
    reg = base.REGISTERS[register]
    context: dict[str, Any] = {"errors": {}, "rows": [], "preview": None}
    status = 200
    if request.method == "POST" and request.POST.get("token"):
        token = request.POST["token"]
        stored, refusal = _stored(caller.account_id, token)
        owner = (caller.account_id, project.key, register)
        if stored and (stored["account"], stored["project"], stored["register"]) != owner:
            stored, refusal = None, PREVIEW_EXPIRED
        if not stored:
            context["errors"], status = {"file": [refusal]}, 422
        else:
            kept = _key(caller.account_id, int(token.partition("-")[0]))
            upload: UploadedFile | None = SimpleUploadedFile(stored["name"], stored["content"])
            try:
                outcome = services.import_file(
                    caller=caller,
                    register=register,
                    upload=upload,
                    expected_digest=stored["digest"],
                    outline_level=stored.get("outlineLevel"),
                )
            except ValidationFailed as exc:
                cache.delete(kept)
                context["errors"], context["rows"] = exc.fields, exc.extra.get("rows", [])
                status = exc.status
            except Conflict as exc:  # frozen since, or no longer what the preview showed
                cache.delete(kept)
                context["errors"], status = {"file": [exc.message]}, exc.status
            else:
                cache.delete(kept)
                noun = reg.noun if outcome.created == 1 else f"{reg.noun}s"
                plan = mspdi.is_xml(stored["content"][:64])
                read = len([w for w in outcome.warnings if plan or w["row"] > 1])
                said = f" ({read} values read as the preview showed)" if read else ""
                messages.success(request, f"Imported {outcome.created} {noun}{said}.")
                return HttpResponseRedirect(reg.base_url(project))
    elif request.method == "POST":
        upload = request.FILES.get("file")
        level = request.POST.get("outlineLevel") if register == "work-packages" else None
        context["outline_level"] = level
        try:
            outcome = services.import_preview(
                caller=caller, register=register, upload=upload, outline_level=level
            )
        except ValidationFailed as exc:
            context["errors"], context["rows"], status = exc.fields, exc.extra.get("rows", []), 422
        else:
            assert upload is not None  # import_preview refuses a missing file (422)
            token = ""
            if outcome.errors:
                status = 422
            else:
                slot = _next_slot(caller.account_id)
                token = f"{slot}-{secrets.token_urlsafe(24)}"
                upload.seek(0)
                cache.set(
                    _key(caller.account_id, slot),
                    {
                        "token": token,
                        "account": caller.account_id,
                        "project": project.key,
                        "register": register,
                        "name": upload.name,
                        "content": upload.read(),
                        "digest": outcome.digest,
                        "outlineLevel": level,
                    },
                    PREVIEW_SECONDS,
                )
            context["preview"] = {
                "outcome": outcome,
                "token": token,
                "file_name": upload.name,
                "noun": reg.noun if outcome.created == 1 else f"{reg.noun}s",
                "failed": len({e["row"] for e in outcome.errors}),
                "plan": mspdi.is_xml(_head(upload)),
                "columns": [label for _, label in preview_columns(register)],
                "rows": _listed(register, outcome.preview()["createRows"]),
                "more": outcome.created - len(outcome.listed),
                "kept_minutes": PREVIEW_SECONDS // 60,
                "kept_previews": PREVIEWS_PER_PERSON,
            }
    context = reg.common_context(
        project,
        caller,
        registers=reg.tabs(project),
        columns=[
            (vocabulary.column_label(register, c), c)
            for c in import_templates.columns(project, register)
        ],
        # A refused or coerced field named as the column list names it (`_import_field.html`).
        column_labels=vocabulary.column_labels(register),
        person_columns=[
            vocabulary.column_label(register, c)
            for c in spreadsheets.PERSON_FIELDS_IN_ORDER[register]
        ],
        outline_levels=range(1, 11),
        **context,
    )
    return render(request, "registers/import.html", context, status=status)


def _listed(register: str, listed: list[dict[str, Any]]) -> list[tuple[int, list[str]]]:
    """The preview's rows to create, each value as the register's pages write it."""
    names = [name for name, _ in preview_columns(register)]
    return [(item["row"], [_cell(n, item["values"].get(n)) for n in names]) for item in listed]


def _cell(name: str, value: Any) -> str:
    if value is None or value == "":
        return "—"
    if name in spreadsheets.MONEY_FIELDS:
        return formatting.money(value, empty="—")
    if isinstance(value, str) and name.endswith(("Date", "On")):
        try:
            return formatting.day(dt.date.fromisoformat(value))
        except ValueError:
            return value
    return str(value)


def _head(upload: IO[bytes]) -> bytes:
    upload.seek(0)
    head = upload.read(64)
    upload.seek(0)
    return head


@page("GET")
def template(request: HtmxHttpRequest, key: str, register: str) -> HttpResponse:
    """The register's import template, XLSX (an example row, drop-down lists) or CSV."""
    project, _ = permissions.project_for(request, key)
    content, content_type, name = import_templates.template(
        project, register, request.GET.get("format", "xlsx")
    )
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
