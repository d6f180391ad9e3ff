"""Re-applying the desired state (the annotation the forms keep) where capacity drifted from it:
one node at once, or every drifted node as a background job, after a dry run of each write."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from flask import render_template, request
from werkzeug.wrappers import Response

from app.domain.changes import ChangeError, validate_set
from app.runtime import reads
from app.web.bulk_jobs import BulkJob
from app.web.bulk_start import keep_done, start_job
from app.web.changes import _node_or_404, actor, writer
from app.web.hx import NODES_AND_PODS
from app.web.surface import Page
from app.web.viewer import viewer

bp = Page("reapply", __name__, url_prefix="/changes", reads=NODES_AND_PODS, when="writes")


def _refuser() -> Callable[[str, int], str | None]:
    """Why a desired-state entry may not be written: the same rules as the forms. Bound to this
    request's app, so a background job can use it."""
    state = viewer().runtime

    def refused(resource: str, count: int) -> str | None:
        try:
            validate_set(
                resource,
                str(count),
                None,
                maximum=state.settings.max_quantity,
                owner=partial(reads.read_only, state),
            )
        except ChangeError as exc:
            return " ".join(exc.errors.values())
        return None

    return refused


def reapply_node(name: str) -> Response | tuple[str, int]:
    _node_or_404(name)
    outcomes = writer().reapply(name, actor(), _refuser())
    return keep_done(outcomes)


REAPPLY_LISTED = 50  # drifted nodes named on the re-apply page; the count covers the rest


def reapply_preview() -> str:
    """The drifted nodes, and a form to check each write with a dry run (a background job)."""
    names = reads.drifted(viewer().runtime)
    return render_template("reapply/index.html", names=names, listed=REAPPLY_LISTED)


def reapply_dry_run() -> Response:
    names = reads.drifted(viewer().runtime)
    return _start_reapply(names, dry_run=True)


def reapply_all() -> Response:
    chosen = set(request.form.getlist("nodes"))
    drifted = [n for n in reads.drifted(viewer().runtime) if n in chosen]
    return _start_reapply(drifted, dry_run=False)


def _start_reapply(names: list[str], dry_run: bool) -> Response:
    """Write the desired state back on ``names`` (or check it with dry runs), node by node, in
    the background: the same job, slot and page as any bulk change."""
    w, who, refused = writer(), actor(), _refuser()

    def each(job: BulkJob) -> None:
        for name in names:
            if job.cancelled:
                return
            job.outcomes.extend(w.reapply(name, who, refused, dry_run=dry_run))
            job.nodes_done += 1

    return start_job(BulkJob(total=len(names), dry_run=dry_run, action="reapply"), each)
