"""GPU-hours: the physical GPUs each team, namespace, queue or workload held (app.domain.gpu_ledger),
since this process began counting (its own figures) or over a window Prometheus keeps
(app.usage.ledger); exported as CSV and JSON with the page's numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from flask import Response, request

from app.domain.ledger_query import BY, WINDOWS, LedgerQuery, LedgerRow, parse, rows
from app.runtime import reads
from app.usage import ledger
from app.usage.poller import UsageUnavailable
from app.web.export import UNTIL_COUNTED, csv_response, json_body
from app.web.hx import NODES_AND_PODS, page_or_fragment
from app.web.surface import Page
from app.web.viewer import refuse_until_counted, viewer

bp = Page("ledger", __name__, url_prefix="/gpu-hours", reads=NODES_AND_PODS)
FIELDS = ("group_by", "group", "gpu_hours", "used", "idle", "window", "start", "end", "coverage")


@dataclass
class Shown:
    """What the page shows: the rows, over which span, how much of it is covered, and why not."""

    rows: list[LedgerRow] = field(default_factory=list)
    start: datetime | None = None  # None: nothing counted (no cluster)
    end: datetime | None = None
    coverage: float | None = None  # the part of the window with reports (None: this process's own)
    unavailable: str = ""  # Prometheus did not answer: why
    own: bool = False  # this process's own figures (since it began counting), not a window's
    usage: bool = False  # used and idle are read (a Prometheus is set)

    @property
    def total(self) -> float:
        return sum(r.hours for r in self.rows)


def shown(query: LedgerQuery, errors: dict[str, str]) -> Shown:
    """This process's own figures, or the window's from Prometheus (where one is set)."""
    now = datetime.now(UTC)
    if query.window == "started":
        held, since = reads.gpu_hours(viewer().runtime)
        used, idle = reads.gpu_hours_used(viewer().runtime) or (None, None)
        return Shown(rows(held, query, used, idle), since, now, own=True, usage=used is not None)
    settings = viewer().runtime.settings
    if not settings.prometheus_url:
        errors["window"] = "Window: GPU-hours over a window are kept by Prometheus, and none is set."
        return shown(LedgerQuery(query.by), errors)
    start, end = query.span(now)
    cluster = viewer().cluster if viewer().fleet_on else ""
    try:
        got = ledger.window(settings, cluster, query, start, end)
    except UsageUnavailable as exc:
        return Shown(start=start, end=end, unavailable=f"Prometheus {exc}")
    found = [
        LedgerRow(
            g,
            h,
            0,
            (got.used or {}).get(g) if got.used else None,
            (got.idle or {}).get(g) if got.idle else None,
        )
        for g, h in sorted(got.hours.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return Shown(found if got.coverage else [], start, end, got.coverage, usage=got.used is not None)


def index() -> str | Response:
    query, errors = parse(request.args)
    said = {
        "ledger": shown(query, errors),
        "query": query,
        "args": query.args(),
        "by": BY,
        "windows": WINDOWS,
    }
    return page_or_fragment("ledger/_table.html", "ledger/index.html", **said, errors=errors)


def _records(query: LedgerQuery, seen: Shown) -> list[dict[str, object]]:
    span = [seen.start.isoformat() if seen.start else "", seen.end.isoformat() if seen.end else ""]
    coverage = round(seen.coverage, 4) if seen.coverage is not None else ""
    return [
        {"group_by": query.by, "group": r.group, "gpu_hours": round(r.hours, 4), "used": _hours(r.used),
         "idle": _hours(r.idle), "window": query.window, "start": span[0], "end": span[1],
         "coverage": coverage}
        for r in seen.rows
    ]  # fmt: skip


def _hours(value: float | None) -> object:
    """GPU-hours as exported: "" where not known (never 0)."""
    return round(value, 4) if value is not None else ""


def export_csv() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    seen = shown(query, errors)
    if refused := "; ".join([*errors.values(), *([seen.unavailable] if seen.unavailable else [])]):
        return Response(refused + "\n", status=422, mimetype="text/plain")
    return csv_response(_records(query, seen), FIELDS, "extres-gpu-hours.csv")


def export_json() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    seen = shown(query, errors)
    body: dict[str, object] = {"rows": _records(query, seen), "group_by": query.by, "window": query.window}
    return json_body({**body, "errors": errors, "unavailable": seen.unavailable})
