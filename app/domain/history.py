"""Changes as the Events this app writes tell them: "<actor>: <action> <resource> <old> -> <new>"."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
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


# Anyone allowed to create Events in the namespace can write one that reads like a change, with
# any reporting component and field manager. The app seals each Event it writes: an HMAC, under
# its secret key, of the node, the message and the time it wrote it, kept in an annotation. A
# seal whose time is far from the API server's creation time is a replay of a real one.
SEAL_ANNOTATION = "extres.dev/seal"
SEAL_SKEW = 300  # seconds allowed between the sealed time and the server's creation time


def seal(key: str, node: str, message: str, when: int) -> str:
    mac = hmac.new(key.encode(), f"history|{node}|{message}|{when}".encode(), hashlib.sha256)
    return f"{when}.{mac.hexdigest()[:32]}"


def sealed(keys: Sequence[str], node: str, message: str, value: str, created: int) -> bool:
    """Whether ``value`` is this app's seal of (node, message), made near ``created``."""
    when, _, _mac = value.partition(".")
    if not (when.isascii() and when.isdigit() and len(when) <= 12) or abs(int(when) - created) > SEAL_SKEW:
        return False
    return any(hmac.compare_digest(seal(k, node, message, int(when)), value) for k in keys)


@dataclass(frozen=True)
class Recent:
    """The changes read, newest first; ``left_out``: Events that looked like this app's but were
    not sealed by it, or copies of one that was; ``incomplete``: the read stopped at its bound;
    ``stale``: the last read, kept while the API server does not answer."""

    changes: list[Change]
    left_out: int = 0
    incomplete: bool = False
    stale: bool = False
