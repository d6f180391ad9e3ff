"""Unhealthy devices: every device a device plugin reports unhealthy, across the nodes, in one
list (app.domain.sick_devices), with a count in the navigation."""

from __future__ import annotations

from flask import Response

from app.runtime import reads
from app.web.hx import NODES_AND_PODS, page_or_fragment
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("sick", __name__, url_prefix="/unhealthy", reads=NODES_AND_PODS)


def index() -> str | Response:
    """Read (the rows' unhealthy devices, named where pods say which), render."""
    rows = reads.sick(viewer().runtime) if viewer().freshness.synced else []
    reading = viewer().usage_reading
    return page_or_fragment("sick/_table.html", "sick/index.html", rows=rows, reading=reading)
