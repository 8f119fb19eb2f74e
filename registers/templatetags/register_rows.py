"""The register table's read rows (registers.views.rows), written in Python: the table's
template calls `{% register_rows %}` where its rows go."""

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

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
