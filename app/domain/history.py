"""Changes as the Events this app writes tell them: "<actor>: <action> <resource> <old> -> <new>"."""

from __future__ import annotations

import re
from dataclasses import dataclass

_MESSAGE = re.compile(
    r"^(?P<actor>.*): (?P<action>set|remove|reapply) (?P<resource>\S+) (?P<old>\S+) -> (?P<new>\S+)$"
)


@dataclass(frozen=True)
class Change:
    when: str  # RFC 3339
    node: str
    actor: str
    action: str
    resource: str
    old: str  # as written: a number, or "absent"
    new: str


def parse_change(when: str, node: str, message: str) -> Change | None:
    """The change an Event's message records, or None for a message of another shape."""
    m = _MESSAGE.match(message or "")
    if m is None:
        return None
    return Change(when, node, m["actor"], m["action"], m["resource"], m["old"], m["new"])
