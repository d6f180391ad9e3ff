"""The HTTP surface, declared once: every route's endpoint, whether it changes the cluster,
whether it is open to anyone, the live region it answers as a fragment, and its place in the
navigation. The nav is drawn from it (templates/base.html), views take their fragment's id from
it (app.web.hx.page_or_fragment), and the web tests walk it (tests/web/test_surface.py): a route
the app registers without a row here fails them, so adding a route is adding its row."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    endpoint: str
    method: str = "GET"
    writes: bool = False  # changes the cluster (a node's status, through the writer)
    open: bool = False  # answered to anyone, verified or not (probes, sign-in, static files)
    fragment: str = ""  # the id of the live region htmx asks it for (a part of its page)
    nav: str = ""  # its label in the navigation ("" when it is not a section)
    badge: str = ""  # the viewer's count its nav label carries (pending, idle)
    shown_if: str = ""  # the viewer's flag that puts it in the nav (queues_on, usage_on, may_write)
    current: tuple[str, ...] = ()  # other endpoints of the same section (the nav marks it)


ROUTES: tuple[Route, ...] = (
    Route("overview.index", fragment="grid", nav="Overview"),
    Route("overview.heat", nav="Heat map"),
    Route("pending.index", fragment="pending-list", nav="Pending", badge="pending"),
    Route("workloads.index", fragment="workloads", nav="Workloads"),
    Route("devices.index", nav="Devices"),
    Route("queues.index", nav="Queues", shown_if="queues_on"),
    Route("idle.index", fragment="idle", nav="Idle GPUs", badge="idle", shown_if="usage_on"),
    Route("sick.index", fragment="sick", nav="Unhealthy", badge="sick"),
    Route("plan.index", nav="What if", current=("plan.submit",)),
    Route("history.index", nav="History"),
    Route("fleet.index", fragment="fleet", nav="Fleet", shown_if="fleet_on"),
    Route("bulk.bulk", fragment="node-choices", nav="Bulk change", shown_if="may_write"),
    Route("plan.submit", method="POST"),  # a What-if pasted: computed, nothing changed
    Route("nodes.detail", fragment="node"),
    Route("pods.detail", fragment="pod"),
    Route("overview.export_csv"),
    Route("overview.export_json"),
    Route("workloads.export_csv"),
    Route("workloads.export_json"),
    Route("idle.export_csv"),
    Route("history.export_csv"),
    Route("fleet.export_csv"),
    Route("fleet.export_json"),
    Route("fleet.apart"),  # one cluster's figures, asked by another cluster's Fleet page
    Route("changes.new"),
    Route("changes.confirm_remove"),
    Route("changes.set_resource", method="POST", writes=True),
    Route("changes.remove_resource", method="POST", writes=True),
    Route("bulk.bulk_preview", method="POST", writes=True),  # a dry run asked of the API server
    Route("bulk.bulk_apply", method="POST", writes=True),
    Route("bulk.results", fragment="job"),
    Route("bulk.cancel", method="POST", writes=True),
    Route("reapply.reapply_preview"),
    Route("reapply.reapply_dry_run", method="POST", writes=True),
    Route("reapply.reapply_all", method="POST", writes=True),
    Route("reapply.reapply_node", method="POST", writes=True),
    Route("changes_off.turned_off"),  # read-only: every /changes/ URL says changes are off
    Route("auth.login_form", open=True),
    Route("auth.login", method="POST", open=True),
    Route("auth.logout", method="POST"),
    Route("health.healthz", open=True),
    Route("health.readyz", open=True),
    Route("static", open=True),
)
BY_ENDPOINT = {r.endpoint: r for r in ROUTES}


@dataclass(frozen=True)
class Blueprint:
    """A module of app/web with ``bp`` (a Page: its read rights beside its routes), registered
    when its condition holds: always (""), only where writes are on ("writes", under /changes),
    only where they are off ("read-only", under /changes), or in token mode ("token")."""

    module: str
    when: str = ""


BLUEPRINTS: tuple[Blueprint, ...] = (
    *(Blueprint(m) for m in ("overview", "nodes", "health", "pending", "plan", "workloads", "history")),
    *(Blueprint(m) for m in ("devices", "idle", "sick", "pods", "queues", "fleet")),
    *(Blueprint(m, "writes") for m in ("changes", "bulk_changes", "reapply")),
    Blueprint("changes_off", "read-only"),
    Blueprint("auth", "token"),
)


def registered(writes: bool, token: bool) -> list[Blueprint]:
    """The blueprints an app with writes on or off, in token mode or not, registers."""
    holds = {"": True, "writes": writes, "read-only": not writes, "token": token}
    return [b for b in BLUEPRINTS if holds[b.when]]


NAV = tuple(r for r in ROUTES if r.nav)


def fragment_of(endpoint: str | None) -> str:
    """The live region's id the route answers as a fragment ("" when it has none)."""
    route = BY_ENDPOINT.get(endpoint or "")
    return route.fragment if route is not None else ""
