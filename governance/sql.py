"""SQL the ORM does not write by itself."""

import json
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Lookup
from django.db.models.sql.compiler import SQLCompiler


class AnyOf(Lookup[bool]):
    """`lhs IN (values)`, for a long list of values (a thousand projects' ids): on PostgreSQL
    one array parameter, `lhs = ANY(%s::type[])`, instead of one placeholder a value, which
    the driver scans out of the statement's text on every run (`psycopg` caches that scan
    for statements of fifty parameters at most). Elsewhere the plain `IN`. Values are given
    as the column stores them (ids), never None. Use as an expression:
    `filter(AnyOf(F("project_id"), ids))`."""

    lookup_name = "any_of"
    prepare_rhs = False

    def as_sql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, tuple[Any, ...]]:
        lhs, params = compiler.compile(self.lhs)
        values = list(self.rhs)
        if not values:
            raise EmptyResultSet
        if connection.vendor == "postgresql":
            db_type = self.lhs.output_field.rel_db_type(connection)
            return f"{lhs} = ANY(%s::{db_type}[])", (*params, values)
        placeholders = ", ".join(["%s"] * len(values))
        return f"{lhs} IN ({placeholders})", (*params, *values)


class ListHolds(Lookup[bool]):
    """Whether a JSON list column holds a text (`account_id in steering_account_ids`), in
    SQL: on PostgreSQL containment, `lhs @> '["value"]'`; elsewhere (SQLite) a search of
    the list's members. Use as an expression: `filter(ListHolds(F("column"), value))`."""

    lookup_name = "list_holds"
    prepare_rhs = False

    def as_sql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, tuple[Any, ...]]:
        lhs, params = compiler.compile(self.lhs)
        value = str(self.rhs)
        if connection.vendor == "postgresql":
            return f"{lhs} @> %s::jsonb", (*params, json.dumps([value]))
        return (
            f"EXISTS (SELECT 1 FROM json_each({lhs}) WHERE json_each.value = %s)",
            (*params, value),
        )
