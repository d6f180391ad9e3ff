"""GPU-hours over a window, from Prometheus (which keeps extres_gpu_seconds_held_total): asked when
a reader asks for a window, bounded as every usage query is (``EXTRES_USAGE_TIMEOUT`` in all, a
small answer, never retried), one at a time per worker, and each answer kept a minute."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime

from app.domain.ledger_query import LedgerQuery, coverage_expr, group_of, held_expr, model_of
from app.settings.config import Settings
from app.usage.poller import UsageUnavailable
from app.usage.prometheus import Prometheus

KEPT_SECONDS = 60.0
KEPT_MOST = 64  # answers kept (windows x groupings x clusters)
MAX_BYTES = 4 << 20  # at most 2,000 accounts a cluster: a few hundred KiB
HOUR = 3600.0


@dataclass(frozen=True)
class Window:
    """GPU-hours per group over a window, and the part of it the dashboard reported in (0..1)."""

    hours: dict[str, float]
    by_model: dict[tuple[str, str], float]  # GPU-hours per (group, model): what prices multiply
    used: dict[str, float] | None  # None: no usage was recorded in the window
    idle: dict[str, float] | None
    coverage: float
    start: datetime
    end: datetime


_one = threading.Lock()  # one window asked of Prometheus at a time in this worker
_kept: dict[tuple[object, ...], tuple[float, Window]] = {}


def window(settings: Settings, cluster: str, query: LedgerQuery, start: datetime, end: datetime) -> Window:
    """GPU-hours per group from ``start`` to ``end``, as Prometheus keeps them; ``cluster``: the
    series' ``cluster`` label where the dashboard exports several ("": none). Raises
    UsageUnavailable (said on the page) when Prometheus does not answer, or is being asked."""
    key = (settings.prometheus_url, cluster, query.by, start, end)
    now = time.monotonic()
    hit = _kept.get(key)
    if hit is not None and now - hit[0] < KEPT_SECONDS:
        return hit[1]
    if not _one.acquire(timeout=0.05):
        raise UsageUnavailable("another window is being read from it; try again in a moment")
    try:
        found = _ask(settings, cluster, query, start, end)
    finally:
        _one.release()
    if len(_kept) >= KEPT_MOST:
        _kept.clear()
    _kept[key] = (now, found)
    return found


def _ask(settings: Settings, cluster: str, query: LedgerQuery, start: datetime, end: datetime) -> Window:
    seconds = max(60, int((end - start).total_seconds()))
    selector = f'cluster="{cluster}"' if cluster else ""
    client = Prometheus(
        settings.prometheus_url or "",
        settings.prometheus_token_file,
        settings.prometheus_ca_file,
        timeout=settings.usage_timeout,
        max_bytes=MAX_BYTES,
    )
    try:
        at = end.timestamp()
        held, used, idle = (client.query(held_expr(query.by, selector, seconds, w), at=at) for w in WHAT)
        covered = client.query(coverage_expr(selector, seconds), at=at)
    finally:
        client.close()
    coverage = min(1.0, max(0.0, covered[0][1])) if covered else 0.0
    busy, left = (_hours(used, query), _hours(idle, query)) if used else (None, None)
    per_model: dict[tuple[str, str], float] = {}
    for key, value in held:
        k = (group_of(key, query.by), model_of(key, query.by))
        per_model[k] = per_model.get(k, 0.0) + value / HOUR
    return Window(_hours(held, query), per_model, busy, left, coverage, start, end)


WHAT = ("held", "used", "idle")


def _hours(samples: list[tuple[str, float]], query: LedgerQuery) -> dict[str, float]:
    hours: dict[str, float] = {}
    for key, value in samples:
        group = group_of(key, query.by)
        hours[group] = hours.get(group, 0.0) + value / HOUR
    return hours
