"""Files sent as they are read: a workbook saved to a temporary file (a workbook is a zip
whose directory comes last, so it is whole only once every row is written: the file, not the
memory, holds it), then sent in pieces."""

import tempfile
from collections.abc import Iterator
from typing import IO

from openpyxl import Workbook

CHUNK_BYTES = 64 * 1024


def saved(workbook: Workbook) -> IO[bytes]:
    """`workbook` saved into a temporary file, at its start; the caller closes it (sending it
    through `chunks` does)."""
    file = tempfile.TemporaryFile()  # noqa: SIM115 (the caller sends, then closes it)
    try:
        workbook.save(file)
    except BaseException:
        file.close()
        raise
    file.seek(0)
    return file


def chunks(file: IO[bytes], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """A file's bytes in pieces, the file closed at the end."""
    with file:
        while piece := file.read(size):
            yield piece
