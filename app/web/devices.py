"""DRA devices: every DeviceClass with the extended resource names it serves, the devices it
matches over the complete pools and how many are free."""

from __future__ import annotations

from flask import render_template

from app.domain.devices import IMPLICIT_PREFIX
from app.runtime import reads
from app.web.hx import NODES_AND_PODS
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("devices", __name__, url_prefix="/devices", reads=NODES_AND_PODS)


def index() -> str:
    runtime = viewer().runtime
    allowed = viewer().may_read_devices
    read = reads.device_classes(runtime) if allowed else reads.DeviceClasses([], [], [])
    return render_template(
        "devices/index.html",
        rows=read.rows,
        incomplete=read.incomplete,
        unbound=read.unbound,
        dra=reads.dra_state(runtime) if allowed else "not-yours",
        implicit_prefix=IMPLICIT_PREFIX,
        shared=reads.shared_gpus(runtime),
        shared_dra=reads.shared_dra(runtime) if allowed else ([], 0),
    )
