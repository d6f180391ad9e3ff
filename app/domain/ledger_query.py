"""The GPU-hours page's query and rows (pure): GPU-hours held, grouped by team, namespace, Kueue
LocalQueue or workload, the most first; a bad argument is named and left out (the page shows
what it would without it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.domain.gpu_ledger import Account

BY = {"team": "Team", "namespace": "Namespace", "queue": "Queue", "workload": "Workload"}
HOUR = 3600.0


@dataclass(frozen=True)
class LedgerQuery:
    by: str = "team"

    def args(self) -> dict[str, str]:
        return {"by": self.by} if self.by != "team" else {}


@dataclass(frozen=True)
class LedgerRow:
    group: str  # the team, namespace, namespace/queue or namespace Kind/name ("" when none)
    hours: float  # GPU-hours held
    accounts: int  # the label sets it sums


def parse(args: Mapping[str, str]) -> tuple[LedgerQuery, dict[str, str]]:
    by = (args.get("by") or "team").strip()
    if by not in BY:
        return LedgerQuery(), {"by": f"Group by: {by[:40]!r} is not one of {', '.join(BY)}."}
    return LedgerQuery(by), {}


def _group(account: Account, by: str) -> str:
    if by == "team":
        return account.team
    if by == "namespace":
        return account.namespace
    if by == "queue":
        return f"{account.namespace}/{account.queue}" if account.queue else ""
    if not account.owner_kind:
        return account.namespace  # folded ("other" has no namespace) or a bare pod's
    return f"{account.namespace} {account.owner_kind}/{account.owner_name}".strip()


def rows(held: Mapping[Account, float], query: LedgerQuery) -> list[LedgerRow]:
    """GPU-hours per group, the most first (a group of none, e.g. pods with no team label, is "")."""
    hours: dict[str, float] = {}
    count: dict[str, int] = {}
    for account, seconds in held.items():
        key = _group(account, query.by)
        hours[key] = hours.get(key, 0.0) + seconds / HOUR
        count[key] = count.get(key, 0) + 1
    return sorted(
        (LedgerRow(key, hours[key], count[key]) for key in hours), key=lambda r: (-r.hours, r.group)
    )
