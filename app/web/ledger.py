"""GPU-hours: the physical GPUs each team, namespace, queue or workload held (app.domain.gpu_ledger),
since this process began counting (its own figures) or over a window Prometheus keeps
(app.usage.ledger); exported as CSV and JSON with the page's numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from flask import Response, request

from app.domain import focus
from app.domain.ledger_query import BY, WINDOWS, LedgerQuery, LedgerRow, by_model, costs, parse, rows
from app.runtime import reads
from app.usage import ledger
from app.usage.poller import UsageUnavailable
from app.web.export import UNTIL_COUNTED, csv_response, json_body
from app.web.hx import NODES_AND_PODS, page_or_fragment
from app.web.surface import Page
from app.web.viewer import refuse_until_counted, viewer

bp = Page("ledger", __name__, url_prefix="/gpu-hours", reads=NODES_AND_PODS)
FIELDS = (
    "group_by",
    "group",
    "gpu_hours",
    "used",
    "idle",
    "cost",
    "currency",
    "window",
    "start",
    "end",
    "coverage",
)


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
    currency: str = ""  # the prices' currency ("": no prices set, no cost column)
    by_model: dict[tuple[str, str], float] = field(default_factory=dict)  # GPU-hours per (group, model)

    @property
    def total(self) -> float:
        return sum(r.hours for r in self.rows)


def shown(query: LedgerQuery, errors: dict[str, str]) -> Shown:
    """This process's own figures, or the window's from Prometheus (where one is set)."""
    settings = viewer().runtime.settings
    currency = settings.gpu_price_currency if settings.prices is not None else ""
    if query.window == "started":
        return _own(query, currency)
    if not settings.prometheus_url:
        errors["window"] = "Window: GPU-hours over a window are kept by Prometheus, and none is set."
        return _own(LedgerQuery(query.by), currency)
    start, end = query.span(datetime.now(UTC))
    cluster = viewer().cluster if viewer().fleet_on else ""
    try:
        got = ledger.window(settings, cluster, query, start, end)
    except UsageUnavailable as exc:
        return Shown(start=start, end=end, unavailable=f"Prometheus {exc}")
    used, idle, cost = got.used, got.idle, costs(got.by_model, settings.prices)
    found = [
        LedgerRow(g, h, used.get(g) if used else None, idle.get(g) if idle else None, cost.get(g))
        for g, h in sorted(got.hours.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    shown_rows = found if got.coverage else []
    seen = Shown(shown_rows, start, end, got.coverage, usage=used is not None, currency=currency)
    seen.by_model = got.by_model if got.coverage else {}
    return seen


def _own(query: LedgerQuery, currency: str) -> Shown:
    """What this process counted since it began."""
    runtime = viewer().runtime
    held, since = reads.gpu_hours(runtime)
    used, idle = reads.gpu_hours_used(runtime) or (None, None)
    found = rows(held, query, used, idle, runtime.settings.prices)
    seen = Shown(found, since, datetime.now(UTC), own=True, usage=used is not None, currency=currency)
    seen.by_model = by_model(held, query.by)
    return seen


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
    settings = viewer().runtime.settings
    currency = settings.gpu_price_currency if settings.prices is not None else ""
    return [
        {"group_by": query.by, "group": r.group, "gpu_hours": round(r.hours, 4), "used": _hours(r.used),
         "idle": _hours(r.idle), "cost": _hours(r.cost), "currency": currency, "window": query.window,
         "start": span[0], "end": span[1], "coverage": coverage}
        for r in seen.rows
    ]  # fmt: skip


def _hours(value: float | None) -> object:
    """GPU-hours as exported: "" where not known (never 0)."""
    return round(value, 4) if value is not None else ""


def _exported() -> tuple[LedgerQuery, Shown, Response | None]:
    """What an export of the page's query shows, or the refusal (422, in words) of a bad argument
    or of Prometheus not answering: a file is never made of part of it."""
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    seen = shown(query, errors)
    refused = "; ".join([*errors.values(), *([seen.unavailable] if seen.unavailable else [])])
    return query, seen, Response(refused + "\n", status=422, mimetype="text/plain") if refused else None


def export_csv() -> Response:
    query, seen, refused = _exported()
    return refused or csv_response(_records(query, seen), FIELDS, "extres-gpu-hours.csv")


def export_focus() -> Response:
    """The same GPU-hours as FOCUS rows, a group and GPU model each (app.domain.focus)."""
    query, seen, refused = _exported()
    if refused is not None:
        return refused
    settings, now = viewer().runtime.settings, datetime.now(UTC)
    found = focus.rows(query.by, seen.by_model, settings.prices, settings.gpu_price_currency,
                       seen.start or now, seen.end or now, viewer().cluster)  # fmt: skip
    return csv_response(found, focus.COLUMNS, "extres-gpu-hours-focus.csv")


def export_json() -> Response:
    refuse_until_counted(UNTIL_COUNTED)
    query, errors = parse(request.args)
    seen = shown(query, errors)
    body: dict[str, object] = {"rows": _records(query, seen), "group_by": query.by, "window": query.window}
    return json_body({**body, "errors": errors, "unavailable": seen.unavailable})
