"""The Idle page's query (pure): filters on the idle pods, parsed from the request's arguments
with a message per bad one (named, and left out: the page shows what it would without it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from app.domain.idle_pods import Idle

MAX_TEXT = 253  # a DNS subdomain: the longest name a filter can match


@dataclass(frozen=True)
class IdleQuery:
    namespace: str = ""  # exactly
    node: str = ""  # exactly
    workload: str = ""  # part of the owner ("Kind/name") or the pod's name
    min_hours: float = 0.0  # device-hours held idle, at least

    def args(self) -> dict[str, str]:
        """The arguments in force, as links carry them."""
        out = {"namespace": self.namespace, "node": self.node, "workload": self.workload}
        if self.min_hours:
            out["min_hours"] = f"{self.min_hours:g}"
        return {k: v for k, v in out.items() if v}


def parse(args: Mapping[str, str]) -> tuple[IdleQuery, dict[str, str]]:
    errors: dict[str, str] = {}
    texts = {}
    for key in ("namespace", "node", "workload"):
        value = (args.get(key) or "").strip()
        if len(value) > MAX_TEXT:
            errors[key] = f"{key.capitalize()}: at most {MAX_TEXT} characters."
            value = ""
        texts[key] = value
    min_hours = 0.0
    raw = (args.get("min_hours") or "").strip()
    if raw:
        try:
            min_hours = float(raw) if len(raw) <= 20 and raw.isascii() else -1.0
        except ValueError:
            min_hours = -1.0
        if not 0 <= min_hours < 1e9:  # NaN fails too
            errors["min_hours"] = f"At least: {raw[:40]!r} is not a number of GPU-hours (e.g. 0.5)."
            min_hours = 0.0
    return IdleQuery(texts["namespace"], texts["node"], texts["workload"], min_hours), errors


def select(rows: Iterable[Idle], q: IdleQuery) -> list[Idle]:
    """The rows the query keeps, in their order."""
    part = q.workload.lower()
    return [
        r
        for r in rows
        if (not q.namespace or r.holding.namespace == q.namespace)
        and (not q.node or r.holding.node == q.node)
        and (not part or part in r.holding.owner.lower() or part in r.holding.pod.lower())
        and r.device_hours >= q.min_hours
    ]
