"""DRA devices: every DeviceClass with the extended resource names it serves, the devices it
matches over the complete pools and how many are free."""

from __future__ import annotations

from flask import render_template

from app.domain.devices import IMPLICIT_PREFIX
from app.web.hx import NODES_AND_PODS, Page
from app.web.viewer import viewer

bp = Page("devices", __name__, url_prefix="/devices", reads=NODES_AND_PODS)


@bp.get("/")
def index() -> str:
    state = viewer().runtime
    store = state.cluster.store
    allowed = viewer().may_read_devices
    rows = store.devices.read(lambda dra: dra.class_rows()) if allowed else []
    incomplete = store.devices.read(lambda dra: list(dra.incomplete)) if allowed else []
    unbound = store.devices.read(lambda dra: list(dra.unbound)) if allowed else []
    return render_template(
        "devices/index.html",
        rows=rows,
        incomplete=incomplete,
        unbound=unbound,
        dra=state.dra_state() if allowed else "not-yours",
        implicit_prefix=IMPLICIT_PREFIX,
    )
