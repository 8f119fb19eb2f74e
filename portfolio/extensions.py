"""Columns an app above the portfolio adds to it: the page (and its column picker), the API's
rows (`/api/v1/portfolio`) and the CSV and XLSX exports. The portfolio never imports those
apps: each declares its columns once (`declare`, from its AppConfig.ready) with who may see
them and how to read their values for a page of projects in a constant number of queries.

For a viewer the source does not admit, the columns are absent (not empty): not on the page,
not in the picker, not in the API's rows, not in the exports."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest

from governance.specs import JsonSchema


@dataclass(frozen=True)
class Column:
    """One added column. `key` names it everywhere: the page's column, the API row's member
    and the value a source answers. `header`: the exports' heading. `places`: the decimals a
    number shows with on the page (the API and the exports keep the number itself)."""

    key: str
    label: str
    header: str
    schema: JsonSchema
    num: bool = False
    title: str = ""
    hint: str = ""
    places: int | None = None

    def as_page_column(self) -> dict[str, Any]:
        """The column as the page's list of columns holds one (`portfolio.views.COLUMNS`)."""
        named = {name: getattr(self, name) for name in ("key", "label", "num", "title")}
        return {**named, "hint": self.hint or self.title}


# {project id: {column key: value}} for the page's projects: a constant number of queries.
Values = Callable[[HttpRequest, Sequence[Any]], Mapping[Any, Mapping[str, Any]]]


@dataclass(frozen=True)
class Source:
    """An app's columns, who sees them (`shown_to`) and how their values are read."""

    name: str
    columns: tuple[Column, ...]
    shown_to: Callable[[HttpRequest], bool]
    values: Values = field(compare=False)


SOURCES: dict[str, Source] = {}


def declare(source: Source) -> None:
    """Add an app's columns to the portfolio (once: a second declaration of the same name
    replaces the first, as a reloaded app's would)."""
    taken = {c.key for s in SOURCES.values() if s.name != source.name for c in s.columns}
    clash = taken & {c.key for c in source.columns}
    if clash:
        raise ValueError(f"Portfolio columns declared twice: {', '.join(sorted(clash))}.")
    SOURCES[source.name] = source


def declared_columns() -> list[Column]:
    """Every added column, whoever may see it (the API document declares them all)."""
    return [c for s in SOURCES.values() for c in s.columns]


def sources_for(request: HttpRequest) -> list[Source]:
    return [s for s in SOURCES.values() if s.shown_to(request)]


def columns_for(request: HttpRequest) -> list[Column]:
    """The added columns this viewer sees."""
    return [c for s in sources_for(request) for c in s.columns]


def fill(
    request: HttpRequest,
    rows: list[dict[str, Any]],
    ids: Sequence[Any],
    wanted: Collection[str] | None = None,
) -> list[Column]:
    """Put the values of the viewer's added columns in `rows` (one per project of `ids`, in
    order; None where a source gives none), and answer those columns. With `wanted` (the
    keys the caller will show), a source none of whose columns is wanted is not read: its
    columns are answered, its values left out."""
    shown: list[Column] = []
    for source in sources_for(request):
        if wanted is not None and not any(c.key in wanted for c in source.columns):
            shown.extend(source.columns)
            continue
        found = source.values(request, ids)
        for row, pk in zip(rows, ids, strict=True):
            values = found.get(pk) or {}
            for column in source.columns:
                row[column.key] = values.get(column.key)
        shown.extend(source.columns)
    return shown
