"""The GPU-hours page's query and rows (pure): GPU-hours held, grouped by team, namespace, Kueue
LocalQueue or workload, the most first; a bad argument is named and left out (the page shows
what it would without it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.domain.gpu_ledger import OTHER, Account
from app.domain.usage_mapping import KEY, SEPARATOR

BY = {"team": "Team", "namespace": "Namespace", "queue": "Queue", "workload": "Workload"}
# the labels each grouping sums by, in extres_gpu_seconds_held_total
GROUP_LABELS = {
    "team": ("team",),
    "namespace": ("namespace",),
    "queue": ("namespace", "queue"),
    "workload": ("namespace", "owner_kind", "owner_name"),
}
WINDOWS = {
    "started": "Since this dashboard started",
    "today": "Today",
    "yesterday": "Yesterday",
    "this-week": "This week",
    "last-week": "Last week",
    "this-month": "This month",
    "last-month": "Last month",
    "days": "The last N days",
}
MOST_DAYS = 400  # the longest window asked of Prometheus
HOUR = 3600.0


@dataclass(frozen=True)
class LedgerQuery:
    by: str = "team"
    window: str = "started"  # one of WINDOWS
    days: int = 7  # for window "days"

    def args(self) -> dict[str, str]:
        out = {"by": self.by} if self.by != "team" else {}
        if self.window != "started":
            out["window"] = self.window
        if self.window == "days":
            out["days"] = str(self.days)
        return out

    def span(self, now: datetime) -> tuple[datetime, datetime]:
        """The window's start and end (UTC, whole days; weeks from Monday), never past ``now``."""
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        week = day - timedelta(days=day.weekday())
        month = day.replace(day=1)
        last_month = (month - timedelta(days=1)).replace(day=1)
        start, end = {
            "today": (day, now),
            "yesterday": (day - timedelta(days=1), day),
            "this-week": (week, now),
            "last-week": (week - timedelta(days=7), week),
            "this-month": (month, now),
            "last-month": (last_month, month),
            "days": (day - timedelta(days=self.days - 1), now),
        }[self.window]
        return start, min(end, now)


@dataclass(frozen=True)
class LedgerRow:
    group: str  # the team, namespace, namespace/queue or namespace Kind/name ("" when none)
    hours: float  # GPU-hours held
    used: float | None = None  # GPU-hours of it busy, as usage was read (None: not known)
    idle: float | None = None
    cost: float | None = None  # GPU-hours x each model's price (None: no prices, or a model unpriced)


def parse(args: Mapping[str, str]) -> tuple[LedgerQuery, dict[str, str]]:
    """The query, and a message per bad argument (named, and left out)."""
    errors: dict[str, str] = {}
    by = (args.get("by") or "team").strip()
    if by not in BY:
        errors["by"] = f"Group by: {by[:40]!r} is not one of {', '.join(BY)}."
        by = "team"
    window = (args.get("window") or "started").strip()
    if window not in WINDOWS:
        errors["window"] = f"Window: {window[:40]!r} is not one of {', '.join(WINDOWS)}."
        window = "started"
    days = 7
    raw = (args.get("days") or "").strip()
    if window == "days" and raw:
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw[:6]) <= MOST_DAYS):
            errors["days"] = f"Days: {raw[:40]!r} is not a whole number of days from 1 to {MOST_DAYS}."
        else:
            days = int(raw)
    return LedgerQuery(by, window, days), errors


def held_expr(by: str, selector: str, seconds: int, what: str = "held") -> str:
    """The PromQL of the GPU-seconds each group held over the ``seconds`` before the query's time:
    one series per account whatever the replicas (max), summed by the grouping's labels."""
    labels = (*GROUP_LABELS[by], "model")  # by model too: each has its price
    metric = f"extres_gpu_seconds_{what}_total"  # held, used or idle
    series = f"{metric}{{{selector}}}" if selector else metric
    summed = f"sum by ({', '.join(labels)}) (max without (instance, pod) (increase({series}[{seconds}s])))"
    joined = ", ".join(f'"{label}"' for label in labels)
    return f'label_join({summed}, "{KEY}", "{SEPARATOR}", {joined})'


def coverage_expr(selector: str, seconds: int) -> str:
    """The part of the window in which the dashboard reported (five-minute steps with a sample)."""
    series = f"extres_cache_synced{{{selector}}}" if selector else "extres_cache_synced"
    return f"count_over_time(max({series})[{seconds}s:300s]) * 300 / {seconds}"


def model_of(key: str, by: str) -> str:
    """The GPU model an answer's key names (after the grouping's labels)."""
    parts = key.split(SEPARATOR)
    return parts[len(GROUP_LABELS[by])] if len(parts) > len(GROUP_LABELS[by]) else ""


def group_of(key: str, by: str) -> str:
    """A grouping's name, as ``rows`` names it, from an answer's key (its labels joined)."""
    labels = dict(zip(GROUP_LABELS[by], key.split(SEPARATOR), strict=False))
    account = Account(
        labels.get("namespace", ""),
        labels.get("queue", ""),
        labels.get("owner_kind", ""),
        labels.get("owner_name", ""),
        labels.get("team", ""),
    )
    return _group(account, by)


def _group(account: Account, by: str) -> str:
    if by == "team":
        return account.team
    if by == "namespace":
        return account.namespace
    if by == "queue":
        return f"{account.namespace}/{account.queue}" if account.queue else ""
    if not account.owner_kind:
        return account.namespace  # a bare pod's
    if account.owner_kind == OTHER and not account.owner_name:
        return OTHER  # accounts past the bound, folded
    return f"{account.namespace} {account.owner_kind}/{account.owner_name}".strip()


def price_of(model: str, prices: Mapping[str, float]) -> float | None:
    """A GPU model's price per GPU-hour: its own, else the "*" one (None: neither set)."""
    return prices.get(model, prices.get("*"))


def costs(
    hours: Mapping[tuple[str, str], float], prices: Mapping[str, float] | None
) -> dict[str, float | None]:
    """Per group, its GPU-hours per model (``hours``: (group, model) -> GPU-hours) times each
    model's price; None for a group with a model no price names (or with no prices at all)."""
    out: dict[str, float | None] = {}
    for (group, model), h in hours.items():
        price = price_of(model, prices) if prices is not None else None
        was = out.get(group, 0.0)
        out[group] = None if price is None or was is None else was + h * price
    return out


def by_model(held: Mapping[Account, float], by: str) -> dict[tuple[str, str], float]:
    """GPU-hours per (group, model)."""
    out: dict[tuple[str, str], float] = {}
    for account, seconds in held.items():
        key = (_group(account, by), account.model)
        out[key] = out.get(key, 0.0) + seconds / HOUR
    return out


def rows(
    held: Mapping[Account, float],
    query: LedgerQuery,
    used: Mapping[Account, float] | None = None,
    idle: Mapping[Account, float] | None = None,
    prices: Mapping[str, float] | None = None,
) -> list[LedgerRow]:
    """GPU-hours per group, the most first (a group of none, e.g. pods with no team label, is ""),
    with the part used and idle where usage was read (``used``, ``idle``: None when it is not)."""
    hours = _summed(held, query.by) or {}
    busy, left = _summed(used, query.by), _summed(idle, query.by)
    cost = costs(by_model(held, query.by), prices)
    return sorted(
        (
            LedgerRow(key, hours[key], busy.get(key) if busy is not None else None,
                      left.get(key) if left is not None else None, cost.get(key))
            for key in hours
        ),
        key=lambda r: (-r.hours, r.group),
    )  # fmt: skip


def _summed(per: Mapping[Account, float] | None, by: str) -> dict[str, float] | None:
    if per is None:
        return None
    out: dict[str, float] = {}
    for account, seconds in per.items():
        key = _group(account, by)
        out[key] = out.get(key, 0.0) + seconds / HOUR
    return out
