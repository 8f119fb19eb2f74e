"""What every register page's views share beside the page class: the register's writes, the
people pickers' choices, the fixed choices of the row forms, the CSRF input the rows' forms
repeat, an HTMX answer, a record's history and the register's pictures."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from governance.models import RAG_CHOICES, AuditEntry, Project
from governance.permissions import Caller
from registers.models import (
    CHANGE_DIMENSIONS,
    RISK_DIRECTIONS,
    RISK_STATUSES,
    RISK_TREATMENTS,
    WP_STATUSES,
)
from registers.summary import Summary


@dataclass(frozen=True)
class Writes:
    """A register's write services (registers.services), which its pages and its API call:
    `update` and `delete` take the record's id by the pages' `id_kwarg` (`risk_id=`, ...);
    a register that deletes nothing has no `delete`."""

    create: Callable[..., Any]  # (caller=, data=)
    build: Callable[[Caller, Project, dict[str, Any]], Any]  # checked, not written
    update: Callable[..., Any]  # (caller=, <id>=, data=, expected_revision=)
    delete: Callable[..., None] | None = None  # (caller=, <id>=, expected_revision=)


# A row form's choices by name: (value, label) pairs (the people pickers', the register's own).
Choices = dict[str, list[tuple[Any, str]]]


class RowForm(TypedDict):
    """An add or edit row form as the register's form partial reads it."""

    id: str | None
    key: str
    uuid: Any  # the record's primary key; None for a new record
    values: dict[str, Any]
    errors: dict[str, list[str]]
    message: str
    conflict: list[dict[str, Any]]
    revision: int | None
    choices: Choices
    token: NotRequired[str]  # the one-time token of an add form (governance.submissions)
    phasing_rows: NotRequired[list[tuple[str, str]]]  # a work package's budget phasing grid
    risk: NotRequired[Any]  # the risk whose decision the form records
    # Field labels of another register (the decision fields inside the risk register).
    labels: NotRequired[dict[str, str]]


STATIC_CHOICES = {
    "wp_status": [(v, v) for v in WP_STATUSES],
    "rag": [(v, "No RAG" if v == "None" else v) for v in RAG_CHOICES],
    "progress": [(str(v), f"{v}%") for v in range(0, 101, 10)],
    "risk_status": [(v, v) for v in RISK_STATUSES],
    "direction": [(v, v) for v in RISK_DIRECTIONS],
    "score": [(str(v), str(v)) for v in range(1, 6)],
    "treatments": list(RISK_TREATMENTS.items()),
    "dimensions": CHANGE_DIMENSIONS,
}


def csrf_input(request: HttpRequest | None) -> str:
    """The CSRF hidden input, built once per response: rows repeat it in every form (htmx
    sends the token in a header; the input serves forms posted without script)."""
    if request is None:
        return ""
    return format_html(
        '<input type="hidden" name="csrfmiddlewaretoken" value="{}">', get_token(request)
    )


def form_people(form: RowForm | None) -> set[str]:
    choices: Choices = form.get("choices", {}) if form else {}
    return {a for a, _ in choices.get("people", [])}


def htmx_response(content: str, status: int) -> HttpResponse:
    response = HttpResponse(content, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def history(project: Project, record: Any) -> list[AuditEntry]:
    return list(
        AuditEntry.objects.filter(project_key=project.key, target_id=str(record.pk)).order_by(
            "-at", "-id"
        )[:50]
    )


@dataclass(frozen=True)
class Drawing:
    """What a register's pictures are drawn from: the project, the page's decorated rows, the
    project-wide values they were decorated with (`extra`), the register's URL, its number of
    rows, and its stored summary (None when it is not current: read live)."""

    project: Project
    records: list[Any]
    extra: dict[str, Any]
    url: str
    total: int
    stored: Summary | None


def pictures_html(reg: Any, drawing: Drawing, *, oob: bool = False) -> str:
    """The register's pictures (its risk matrices, its timeline and budget curve) in their
    frame, `#register-pictures`; `oob`: to be swapped in out of band beside an HTMX answer.
    Nothing for a register without pictures."""
    if not reg.draws_pictures:
        return ""
    drawn = reg.pictures(drawing)
    html = render_to_string("registers/_pictures.html", {"pictures": drawn, "oob": oob})
    return mark_safe(html)  # rendered by our template, autoescaped
