"""Recent changes, from the Events this app writes: who, node, resource, old -> new, when."""

from __future__ import annotations

from flask import render_template, request

from app.domain.history import Recent
from app.kube.errors import KubeError
from app.web.hx import Page, resource_arg
from app.web.paging import paginate
from app.web.services import Services

bp = Page("history", __name__, url_prefix="/history", reads=(("list", "nodes"),))
PAGE_SIZE = 100


@bp.get("/")
def index() -> str:
    state = Services.get()
    node = request.args.get("node", "").strip()[:253]
    errors: dict[str, str] = {}
    resource = resource_arg(request.args, errors, then="Showing every resource.")
    problem = None
    try:
        recent = state.cluster.history.recent()
    except KubeError as err:
        recent, problem = Recent([]), f"The change history could not be read: {err.message}"
    shown = [
        c for c in recent.changes if (not node or node in c.node) and (not resource or c.resource == resource)
    ]
    rows, page, pages = paginate(shown, PAGE_SIZE)
    args = {k: v for k, v in (("node", node), ("resource", resource)) if v}
    return render_template(
        "history/index.html",
        rows=rows,
        total=len(shown),
        page=page,
        pages=pages,
        args=args,
        errors=errors,
        problem=problem,
        recent=recent,
        namespace=state.settings.event_namespace,
    )
