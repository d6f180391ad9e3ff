"""CSV downloads that a spreadsheet opens as data, never as formulas."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence

from flask import Response, jsonify

from app.web import clusters

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


def json_body(body: dict[str, object]) -> Response:
    """``body`` as JSON; a member cluster's names its cluster (``"cluster"``), so a file of it
    says where it came from. The dashboard's own cluster's is as it always was."""
    if (cluster := clusters.asked()) is not None:
        body = {"cluster": cluster, **body}
    return jsonify(body)


def csv_response(rows: Iterable[Mapping[str, object]], fields: Sequence[str], filename: str) -> Response:
    """``rows`` as a CSV download named ``filename`` (a member cluster's: its name added, so that
    files from several clusters never overwrite one another)."""
    if (cluster := clusters.asked()) is not None:
        stem, dot, ext = filename.rpartition(".")
        filename = f"{stem}-{cluster}{dot}{ext}"
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(fields))
    writer.writeheader()
    writer.writerows({k: cell(v) for k, v in row.items()} for row in rows)
    return Response(
        buf.getvalue(),
        mimetype="text/csv",
        headers={"Content-Disposition": f"attachment; filename={filename}"},
    )
