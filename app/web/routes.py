"""The route table: every route of the app, declared once, a row each (app.web.surface.Route): its
view, page, path and method; whether it writes, is for editors or is open; the live region it
answers as a fragment and its place in the navigation. The app registers its pages from here
(``register``), the navigation is drawn from ``NAV``, and tests/web/test_surface.py walks
``ROUTES``: adding a route is adding its row."""

from __future__ import annotations

from flask import Flask

from app.web import (
    auth,
    bulk_changes,
    changes,
    changes_off,
    devices,
    fleet,
    health,
    history,
    idle,
    ledger,
    nodes,
    overview,
    pending,
    plan,
    pods,
    queues,
    reapply,
    sick,
    workloads,
)
from app.web.surface import STATIC, Page, Route, declare

R = Route
ROUTES: tuple[Route, ...] = (
    # the sections, in the navigation's order
    R(overview.index, overview.bp, "/", fragment="grid", nav="Overview"),
    R(overview.heat, overview.bp, "/heat", nav="Heat map"),
    R(pending.index, pending.bp, "/", fragment="pending-list", nav="Pending", badge="pending"),
    R(workloads.index, workloads.bp, "/", fragment="workloads", nav="Workloads"),
    R(devices.index, devices.bp, "/", nav="Devices"),
    R(queues.index, queues.bp, "/", nav="Queues", shown_if="queues_on"),
    R(idle.index, idle.bp, "/", fragment="idle", nav="Idle GPUs", badge="idle", shown_if="usage_on"),
    R(sick.index, sick.bp, "/", fragment="sick", nav="Unhealthy", badge="sick"),
    R(ledger.index, ledger.bp, "/", fragment="ledger", nav="GPU-hours", shown_if="gpu_hours_on"),
    R(plan.index, plan.bp, "/", nav="What if", current=("plan.submit",)),
    R(history.index, history.bp, "/", nav="History"),
    R(fleet.index, fleet.bp, "/", fragment="fleet", nav="Fleet", shown_if="fleet_on"),
    R(
        bulk_changes.bulk,
        bulk_changes.bp,
        "/bulk",
        editors=True,
        fragment="node-choices",
        nav="Bulk change",
        shown_if="may_write",
    ),
    # pages and exports
    R(plan.submit, plan.bp, "/", method="POST"),  # a What-if pasted: computed, nothing changed
    R(nodes.detail, nodes.bp, "/<name>", fragment="node"),
    R(pods.detail, pods.bp, "/<namespace>/<name>", fragment="pod"),
    R(overview.export_csv, overview.bp, "/export.csv"),
    R(overview.export_json, overview.bp, "/export.json"),
    R(workloads.export_csv, workloads.bp, "/export.csv"),
    R(workloads.export_json, workloads.bp, "/export.json"),
    R(idle.export_csv, idle.bp, "/export.csv"),
    R(ledger.export_csv, ledger.bp, "/export.csv"),
    R(ledger.export_json, ledger.bp, "/export.json"),
    R(ledger.export_focus, ledger.bp, "/focus.csv"),  # FOCUS-shaped
    R(history.export_csv, history.bp, "/export.csv"),
    R(fleet.export_csv, fleet.bp, "/export.csv"),
    R(fleet.export_json, fleet.bp, "/export.json"),
    R(fleet.apart, fleet.bp, "/apart"),  # one cluster's figures, asked by another cluster's Fleet page
    # forms and writes (under /changes; registered only where writes are on)
    R(changes.new, changes.bp, "/nodes/<name>/resources/new", editors=True),
    R(changes.confirm_remove, changes.bp, "/nodes/<name>/resources/remove", editors=True),
    R(changes.set_resource, changes.bp, "/nodes/<name>/resources", method="POST", writes=True, editors=True),
    R(
        changes.remove_resource,
        changes.bp,
        "/nodes/<name>/resources/remove",
        method="POST",
        writes=True,
        editors=True,
    ),
    # a dry run asked of the API server
    R(bulk_changes.bulk_preview, bulk_changes.bp, "/bulk/preview", method="POST", writes=True, editors=True),
    R(bulk_changes.bulk_apply, bulk_changes.bp, "/bulk/apply", method="POST", writes=True, editors=True),
    R(bulk_changes.results, bulk_changes.bp, "/results/<key>", editors=True, fragment="job"),
    R(
        bulk_changes.cancel,
        bulk_changes.bp,
        "/results/<key>/cancel",
        method="POST",
        writes=True,
        editors=True,
    ),
    R(reapply.reapply_preview, reapply.bp, "/reapply", editors=True),
    R(reapply.reapply_dry_run, reapply.bp, "/reapply/preview", method="POST", writes=True, editors=True),
    R(reapply.reapply_all, reapply.bp, "/reapply", method="POST", writes=True, editors=True),
    R(reapply.reapply_node, reapply.bp, "/nodes/<name>/reapply", method="POST", writes=True, editors=True),
    # read-only: every /changes/ URL says changes are off, never a stock "Not Found"
    R(changes_off.turned_off, changes_off.bp, "/", also=("POST",), defaults=(("rest", ""),)),
    R(changes_off.turned_off, changes_off.bp, "/<path:rest>", also=("POST",)),
    # signing in (token mode) and the probes
    R(auth.login_form, auth.bp, "/login", open=True),
    R(auth.login, auth.bp, "/login", method="POST", open=True),
    R(auth.logout, auth.bp, "/logout", method="POST"),
    R(health.healthz, health.bp, "/healthz", open=True),
    R(health.readyz, health.bp, "/readyz", open=True),
    STATIC,  # Flask's own: htmx, the stylesheet, the script
)
BY_ENDPOINT = {r.endpoint: r for r in ROUTES}
NAV = tuple(r for r in ROUTES if r.nav)
PAGES: tuple[Page, ...] = tuple(dict.fromkeys(r.page for r in ROUTES if r.page is not None))
declare(ROUTES)


def registered(writes: bool, token: bool) -> list[Page]:
    """The pages an app with writes on or off, in token mode or not, registers."""
    holds = {"": True, "writes": writes, "read-only": not writes, "token": token}
    return [p for p in PAGES if holds[p.when]]


def register(app: Flask, writes: bool, token: bool) -> None:
    for page in registered(writes, token):
        app.register_blueprint(page)
