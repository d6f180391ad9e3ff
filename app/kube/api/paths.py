"""API paths, built one way: ``/api/v1`` for the core group, ``/apis/<group>/<version>`` for the
others, then each segment a caller gives quoted whole (a name never adds a slash, a query or a
fragment to the path it is put in)."""

from __future__ import annotations

from urllib.parse import quote


def path(group_version: str, *segments: str) -> str:
    """``path("v1", "namespaces", ns, "pods", name)`` -> ``/api/v1/namespaces/<ns>/pods/<name>``."""
    base = f"/apis/{group_version}" if "/" in group_version else f"/api/{group_version}"
    return base + "".join("/" + quote(s, safe="") for s in segments)
