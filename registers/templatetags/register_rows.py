"""The register table's read rows (registers.views.rows), written in Python: the table's
template calls `{% register_rows %}` where its rows go; and its sortable header cells,
`{% sort_header key label num=True %}`, one call a cell."""

from typing import Any

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from governance.templatetags.gov import query_with
from registers.views.rows import RowContext, rows_html

register = template.Library()


@register.simple_tag(takes_context=True)
def register_rows(context: Any) -> SafeString:
    """The page's `rows` as the register draws them; the row being edited without script
    (`editing_id`) as the register's `row-edit` partial, with the page's context."""
    reg = context["reg"]
    rows = context.get("rows") or []
    row_context = RowContext.of(context)
    editing = context.get("editing_id")
    if editing is None or all(r.pk != editing for r in rows):
        return rows_html(reg.slug, rows, row_context)
    edit_row = context.template.engine.get_template(f"{reg.template}#row-edit")
    parts = []
    for r in rows:
        if r.pk == editing:
            with context.push(r=r):
                parts.append(edit_row.render(context))
        else:
            parts.append(rows_html(reg.slug, [r], row_context))
    return mark_safe("".join(parts))  # the partial's own (autoescaped) output and our rows


@register.simple_tag(takes_context=True)
def sort_header(context: Any, key: str, label: str = "", *, num: bool = False) -> SafeString:
    """The sortable header cell of the table's column `key` (`table.columns[key]`: whether it
    is the sort, its direction, the next one), named `label` or else the register's own label
    of the column (`reg.labels[key]`): a link that sorts the table by it, and what it says to
    a screen reader. The same bytes the include of `registers/_th.html` wrote, its closing
    line end too (tests/registers/test_rows.py compares the two)."""
    col = context["table"].columns.get(key) or {}
    direction, upcoming, active = col.get("direction", ""), col.get("next", ""), col.get("active")
    name = label or context["reg"].labels.get(key) or ""
    e = conditional_escape  # as the template's autoescape
    query = e(query_with(context, sort=key, dir=upcoming, after="", before=""))
    sort = {"asc": "ascending", "desc": "descending"}.get(direction, "none")
    cell = ' class="num"' if num else ""
    shown = f" sorted-{e(direction)}" if active else ""
    said = f", sorted {'ascending' if direction == 'asc' else 'descending'}" if active else ""
    then = "ascending" if upcoming == "asc" else "descending"
    return mark_safe(  # every value escaped above
        f'<th scope="col"{cell} aria-sort="{sort}"><a href="{query}" hx-get="{query}" '
        'hx-target="#register-table" hx-swap="outerHTML" hx-push-url="true" '
        f'class="sort{shown}">{e(name)}<span class="visually-hidden">{said}; sort {then}</span>'
        "</a></th>\n"
    )
