"""DRA devices: every DeviceClass with the extended resource names it serves, the devices it
matches over the complete pools and how many are free."""

from __future__ import annotations

from flask import render_template

from app.domain.devices import IMPLICIT_PREFIX
from app.web.hx import NODES_AND_PODS, Page
from app.web.security import identity
from app.web.services import Services

DRA_READS = (("list", "resource.k8s.io/deviceclasses"), ("list", "resource.k8s.io/resourceslices"))
bp = Page("devices", __name__, url_prefix="/devices", reads=NODES_AND_PODS)


def may_read_devices() -> bool:
    """Whether this user may read DRA objects: without the right, pages show a note instead."""
    state = Services.get()
    if state.settings.auth_mode == "service-account":
        return True
    access, who = state.cluster.access, identity()
    return all(access.allowed(who, verb, resource) for verb, resource in DRA_READS)


@bp.get("/")
def index() -> str:
    state = Services.get()
    store = state.cluster.store
    allowed = may_read_devices()
    rows = store.with_dra(lambda dra: dra.class_rows()) if allowed else []
    incomplete = store.with_dra(lambda dra: list(dra.incomplete)) if allowed else []
    unbound = store.with_dra(lambda dra: list(dra.unbound)) if allowed else []
    return render_template(
        "devices/index.html",
        rows=rows,
        incomplete=incomplete,
        unbound=unbound,
        dra=state.dra_state() if allowed else "not-yours",
        implicit_prefix=IMPLICIT_PREFIX,
    )
