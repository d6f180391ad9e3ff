"""The capacity history's query (pure): node, resource and days, parsed from the request's
arguments with a message per bad one (named, and left out: the page shows what it would
without it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import date

from app.domain.capacity_log import Record
from app.domain.names import resource_field


@dataclass(frozen=True)
class HistoryQuery:
    node: str = ""  # part of the node's name
    resource: str = ""  # exactly
    since: str = ""  # YYYY-MM-DD, from that day on
    until: str = ""  # YYYY-MM-DD, up to that day

    def args(self) -> dict[str, str]:
        """The arguments in force, as links carry them."""
        return {k: v for k, v in asdict(self).items() if v}

    def selects(self, record: Record) -> bool:
        return (not self.node or self.node in record.node) and (
            not self.resource or record.resource == self.resource
        )


def _day(args: Mapping[str, str], name: str, label: str, errors: dict[str, str]) -> str:
    text = (args.get(name) or "").strip()[:10]
    if not text:
        return ""
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        errors[name] = f"{label}: {text!r} is not a date (YYYY-MM-DD); left out."
        return ""


def parse(args: Mapping[str, str]) -> tuple[HistoryQuery, dict[str, str]]:
    errors: dict[str, str] = {}
    resource, error = resource_field(args.get("resource") or "", then="Showing every resource.")
    if error:
        errors["resource"] = error
    since, until = _day(args, "since", "From", errors), _day(args, "until", "To", errors)
    if since and until and since > until:
        errors["until"] = "To: before From; left out."
        until = ""
    return HistoryQuery((args.get("node") or "").strip()[:253], resource, since, until), errors
