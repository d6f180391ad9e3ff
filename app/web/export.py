"""CSV downloads that a spreadsheet opens as data, never as formulas."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence

from flask import Response

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> object:
    """A text cell a spreadsheet would read as a formula (``=HYPERLINK(...)``, ``@SUM``, ``-1+1``)
    is prefixed with ``'`` (OWASP's advice); numbers and booleans stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


UNTIL_COUNTED = (
    "Exports open once every pod is counted{so_far}: one made now would hold only part of the "
    "requests. Try again shortly."
)


def csv_response(rows: Iterable[Mapping[str, object]], fields: Sequence[str], filename: str) -> Response:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(fields))
    writer.writeheader()
    writer.writerows({k: cell(v) for k, v in row.items()} for row in rows)
    return Response(
        buf.getvalue(),
        mimetype="text/csv",
        headers={"Content-Disposition": f"attachment; filename={filename}"},
    )
