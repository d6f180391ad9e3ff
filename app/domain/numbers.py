"""Whole numbers read from text that anyone may have written (a form, a query, a YAML value, a
message or an object in the cluster): one parser, bounded before Python's ``int`` ever sees the
text, so a 5,000-digit number is refused like any other bad number instead of raising
``ValueError: Exceeds the limit (4300 digits)`` where no one expects it."""

from __future__ import annotations

import re

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_TEXT = 64  # characters, leading zeros included
_INT = re.compile(r"[+-]?[0-9]+")


def bounded_int(text: object, low: int = INT64_MIN, high: int = INT64_MAX) -> int | None:
    """``text`` as an int within [low, high] (an optional sign and ASCII digits, nothing else:
    no spaces, no underscores, no fullwidth digits, as Go's ``strconv.ParseInt``); None otherwise."""
    if not isinstance(text, str) or len(text) > MAX_TEXT or not _INT.fullmatch(text):
        return None
    value = int(text)  # at most 64 digits: far below Python's own limit
    return value if low <= value <= high else None


def within(value: object, low: int = INT64_MIN, high: int = INT64_MAX) -> int | None:
    """An int already decoded (a YAML or JSON number) within [low, high]; None otherwise (a bool,
    a float, anything else)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return None
    return value
