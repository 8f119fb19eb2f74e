"""Many new rows of one model at once: an import's records and their audit entries.

On PostgreSQL the rows are sent as one COPY: `bulk_create` sends each column as an array
literal that the driver escapes in Python, quote by quote (a 5 MB file of quoted text and the
JSON of its audit entries: about 1.4 million escapes) and the server parses back, several times
slower than COPY's stream of the same values. Elsewhere, and for rows COPY would not write as
`bulk_create` does (an id left to the database on some rows but not others, a value that is an
expression, a model with parents), `bulk_create` in batches. Either way the rows are those
`Model.save()` would insert: each field's `pre_save` (auto_now, auto_now_add) and database
value, generated columns left to the database (read from the row when next asked for), no
signals sent; the records are marked stored as `bulk_create` marks them. Ids the database
assigns are not read back: use it for rows nothing reads again by id in the same request
(`bulk_create` for those)."""

from collections.abc import Sequence
from typing import Any

from django.db import connections, models, router


def insert_many(
    model: type[models.Model], records: Sequence[models.Model], batch_size: int
) -> None:
    """Insert `records` (new instances of `model`, in this order) inside the caller's
    transaction."""
    if not records:
        return
    alias = router.db_for_write(model)
    connection = connections[alias]
    columns = _copy_columns(model, records) if connection.vendor == "postgresql" else None
    if columns is None:
        model._default_manager.db_manager(alias).bulk_create(records, batch_size=batch_size)
        return
    rows = [
        [field.get_db_prep_save(field.pre_save(record, True), connection) for field in columns]
        for record in records
    ]
    if any(hasattr(value, "resolve_expression") for row in rows for value in row):
        model._default_manager.db_manager(alias).bulk_create(records, batch_size=batch_size)
        return
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    with (
        connection.cursor() as cursor,
        cursor.copy(f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)
    # COPY returns nothing: a generated column is read from the row when next asked for.
    generated = [field.attname for field in model._meta.concrete_fields if field.generated]
    for record in records:
        record._state.adding = False
        record._state.db = alias
        for name in generated:
            record.__dict__.pop(name, None)


def _copy_columns(model: type[models.Model], records: Sequence[models.Model]) -> list[Any] | None:
    """The columns a COPY of `records` writes (the id only when every record has one), or
    None when `bulk_create` is needed."""
    meta = model._meta
    if meta.parents:
        return None
    given = [record.pk is not None for record in records]
    if any(given) and not all(given):
        return None
    if not any(given) and not isinstance(
        meta.pk, models.AutoField | models.BigAutoField | models.SmallAutoField
    ):
        return None
    return [
        field
        for field in meta.concrete_fields
        if not field.generated and (field is not meta.pk or all(given))
    ]
