"""Queues (Kueue): per ClusterQueue its quotas per flavor and resource, reserved and in use, its
workloads; per flavor the quota of every queue beside the nodes it selects, flagging quota past
their capacity and extended resources on nodes no queue can hand out. Shown where Kueue is."""

from __future__ import annotations

from flask import render_template

from app.runtime import reads
from app.web.hx import NODES_AND_PODS
from app.web.paging import paged
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("queues", __name__, url_prefix="/queues", reads=NODES_AND_PODS)
PAGE_SIZE = 20  # ClusterQueues a page


def index() -> str:
    """Read the report over the queues and the nodes; render."""
    report, served = reads.queues(viewer().runtime)
    return render_template(
        "queues/index.html",
        report=report,
        served=served,
        **paged("queues", report.queues, PAGE_SIZE),
    )
