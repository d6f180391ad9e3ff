"""One dict per distinct content: pods mostly repeat a few request shapes, selectors and labels."""

from __future__ import annotations

import sys
from typing import Any

EMPTY: dict[str, Any] = {}
_SHARED: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}
_SHARED_MAX = 100_000


def shared(values: dict[str, Any]) -> dict[str, Any]:
    """The one dict with ``values``' content (never mutate it); past ``_SHARED_MAX`` distinct
    contents, ``values`` itself."""
    if not values:
        return EMPTY
    key = tuple(sorted(values.items()))
    found = _SHARED.get(key)
    if found is None:
        if len(_SHARED) >= _SHARED_MAX:
            return values
        found = _SHARED[key] = {sys.intern(k): v for k, v in key}
    return found
