"""GPU-hours: the physical GPUs each team, namespace, queue or workload held, from every bind and
end the watch saw (app.domain.gpu_ledger), since this process began counting; exported as CSV and
JSON with the page's numbers. Over any window, Prometheus keeps them (docs/usage.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Response, request

from app.domain.ledger_query import BY, LedgerQuery, LedgerRow, parse, rows
from app.runtime import reads
from app.web.export import UNTIL_COUNTED, csv_response, json_body
from app.web.hx import NODES_AND_PODS, page_or_fragment
from app.web.surface import Page
from app.web.viewer import refuse_until_counted, viewer

bp = Page("ledger", __name__, url_prefix="/gpu-hours", reads=NODES_AND_PODS)
FIELDS = ("group_by", "group", "gpu_hours", "accounts", "since", "as_of")


def _ledger(query: LedgerQuery) -> tuple[list[LedgerRow], str]:
    """The rows, and since when they count ("" with no cluster)."""
    held, since = reads.gpu_hours(viewer().runtime)
    return rows(held, query), since.isoformat() if since is not None else ""


def index() -> str | Response:
    query, errors = parse(request.args)
    found, since = _ledger(query)
    total = sum(r.hours for r in found)
    said = {"rows": found, "since": since, "total": total, "query": query, "args": query.args(), "by": BY}
    return page_or_fragment("ledger/_table.html", "ledger/index.html", **said, errors=errors)


def _records(query: LedgerQuery) -> list[dict[str, object]]:
    found, since = _ledger(query)
    now = datetime.now(UTC).isoformat()  # the figures run to this moment
    return [
        {"group_by": query.by, "group": r.group, "gpu_hours": round(r.hours, 4), "accounts": r.accounts,
         "since": since, "as_of": now}
        for r in found
    ]  # fmt: skip


def export_csv() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    if errors:
        return Response("; ".join(errors.values()) + "\n", status=422, mimetype="text/plain")
    return csv_response(_records(query), FIELDS, "extres-gpu-hours.csv")


def export_json() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    return json_body({"rows": _records(query), "group_by": query.by, "errors": errors})
