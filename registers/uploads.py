"""What every reader of an uploaded register file shares (the spreadsheets' CSV, XLSX and
ODS reader, `registers.spreadsheets`, and the Microsoft Project plan's, `registers.mspdi`):
the size and row limits, the money columns read by the money rule, and the `Reading` both
give back."""

import dataclasses
from typing import Any

from governance import specs
from governance.specs import NullableNumber, SignedAmount
from registers.specs import SPECS

MAX_BYTES = 5 * 1024 * 1024
MAX_ROWS = 5000  # rows with data under the header

# Money, read in files as spreadsheets write it (`governance.spreadsheet_values.money`).
MONEY_COLUMNS = {
    slug: set(specs.with_rule(spec, (NullableNumber, SignedAmount))) for slug, spec in SPECS.items()
}


@dataclasses.dataclass
class Reading:
    """An import file as read: the rows with data, (row number, data in API field names); the
    cells that cannot be read (`problems`, [{row, field, message}]); and how values were read
    where that is not the text as it stands (`notes`, [{row, field, message}]: an amount with
    its currency and grouping, a date in the day order of the settings, a read-only column
    ignored; row 1 is the header). `digest` is the SHA-256 of the file's bytes."""

    rows: list[tuple[int, dict[str, Any]]]
    problems: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    digest: str
