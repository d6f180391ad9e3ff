"""/metrics for Prometheus, from the cache (no API call) and the app's own counters."""

from __future__ import annotations

import time
from collections.abc import Iterator

from flask import Blueprint, Flask, Response, g, request

from app.metrics import gauge
from app.web.state import State

bp = Blueprint("metrics", __name__)


def _cluster_lines(state: State) -> Iterator[str]:
    """From the kept overview rows: O(nodes x resources) per scrape, never a walk over the pods."""
    cache = state.cluster.cache
    rows, _ = cache.overview_rows()
    for field, help_text in (
        ("capacity", "Extended resource capacity of a node."),
        ("allocatable", "Extended resource allocatable on a node."),
        ("requested", "Extended resource requested by the non-terminated pods bound to a node."),
    ):
        yield from gauge(
            f"extres_node_{field}",
            help_text,
            (
                ({"node": row.name, "resource": r}, getattr(u, field))
                for row in rows
                for r, u in row.usage.items()
                if (u.advertised if field != "requested" else u.requested)
            ),
        )
    pending: dict[str, int] = {}
    for pod in cache.unschedulable_pods():
        for r in pod.extended_requests or {"": 0}:
            pending[r] = pending.get(r, 0) + 1
    yield from gauge(
        "extres_pending_pods",
        "Unschedulable pods, by extended resource requested ('' for none).",
        (({"resource": r}, v) for r, v in sorted(pending.items())),
    )
    fresh = cache.freshness()
    yield from gauge(
        "extres_cache_synced",
        "1 when the cache has synced and its watches are open.",
        [({}, int(not fresh.stale))],
    )


@bp.get("/metrics")
def metrics() -> Response:
    state = State.get()
    lines = [*_cluster_lines(state), *state.metrics.lines()]
    return Response("\n".join(lines) + "\n", mimetype="text/plain; version=0.0.4")


def init_app(app: Flask) -> None:
    @app.before_request
    def start_timer() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def record(response):
        started = g.get("started")
        if started is not None and request.endpoint not in (None, "static", "metrics.metrics"):
            State.get().metrics.observe(request.endpoint, request.method, time.perf_counter() - started)
        return response
