"""Changes over many nodes, on the changes blueprint: the bulk form (chosen nodes or a label
selector) with its dry-run preview, and the background jobs' results pages. Re-applying the
desired state is in ``app.web.reapply``; starting a job in ``app.web.bulk_jobs``."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any
from urllib.parse import urlencode

from flask import abort, request, url_for
from flask.typing import ResponseReturnValue
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Response

from app.base import audit
from app.domain.bulk_form import parse_bulk
from app.domain.changes import ChangeError, Impact, validate_expected
from app.kube.api.writer import NodeWriter, Outcome
from app.kube.wire.projections import NodeView
from app.runtime import reads
from app.web import process, security
from app.web.bulk_jobs import BulkJob
from app.web.bulk_start import job_owner, start_job
from app.web.changes import actor, node_impact, writer
from app.web.hx import NODES_AND_PODS, page_or_fragment, redirect
from app.web.paging import paged
from app.web.surface import Page
from app.web.viewer import viewer

log = logging.getLogger(__name__)
bp = Page("bulk", __name__, url_prefix="/changes", reads=NODES_AND_PODS, when="writes")
RESULTS_PAGE = 100  # per-node outcomes per page


# ---- many nodes -----------------------------------------------------------------
def bulk() -> ResponseReturnValue:
    if request.args.get("check") == "1":  # a preview's or an apply's refusal, again (Back, Reload)
        try:
            _parse_bulk(request.args)
        except ChangeError as exc:
            return _bulk_form(exc.errors, request.args)  # a 200: htmx's history restore swaps no 4xx
    return _bulk_form({}, request.args)


AGAIN_MOST = 2000  # characters of a refused form's URL (its history entry); longer, none is made


def _refused(errors: dict[str, str], form: MultiDict[str, str]) -> ResponseReturnValue:
    """The form again with why, at a GET URL of its own whose answer is this one again (a longer
    form, many nodes chosen, makes no history entry: Reload shows the empty form)."""
    values = [(k, v) for k, v in form.items(multi=True) if k != "csrf_token"]
    url = url_for("bulk.bulk") + "?" + urlencode([*values, ("check", "1")])
    html, status = _bulk_form(errors, form, 422)
    return html, status, {"HX-Push-Url": url if len(url) <= AGAIN_MOST else "false"}


CHOICES = 50  # nodes offered as checkboxes at once: the search narrows them, never all 5,000


def _bulk_form(
    errors: dict[str, str], values: MultiDict[str, str], status: int = 200
) -> tuple[str | Response, int]:
    """The bulk form: the chosen nodes, then the first nodes whose name contains ``find``."""
    names = reads.node_names(viewer().runtime)
    find = values.get("find", "").strip()[:253]
    chosen = list(dict.fromkeys(values.getlist("nodes"))) if hasattr(values, "getlist") else []
    needle = find.lower()
    matching = [n for n in names if needle in n.lower()] if needle else names
    picked = set(chosen)
    offered = [n for n in matching[: CHOICES + len(picked)] if n not in picked][:CHOICES]
    html = page_or_fragment(
        "bulk/_node_choices.html",
        "bulk/index.html",
        chosen=chosen,
        offered=offered,
        matching=len(matching),
        find=find,
        values=values,
        errors=errors,
    )
    return html, status


def _parse_bulk(form: Any) -> tuple[str, str, int | None, list[NodeView]]:
    """``form``: request.form or request.args (a MultiDict, read as bulk_form.Form)."""
    """The bulk form (app.domain.bulk_form) over the nodes held: (action, resource, count, the
    target nodes); raises ChangeError."""
    state = viewer().runtime
    change = parse_bulk(
        form, reads.node_labels(state), partial(reads.read_only, state), state.settings.max_quantity
    )
    targets = [n for t in change.targets if (n := reads.node_view(state, t)) is not None]
    return change.action, change.resource, change.count, targets


def _run_each(
    w: NodeWriter,
    who: str,
    action: str,
    resource: str,
    count: int | None,
    targets: Iterable[tuple[str, int | None]],
    dry_run: bool,
    report: Callable[[Outcome], None],
    cancelled: Callable[[], bool] = lambda: False,
) -> None:
    """Each target in turn; a failure on one node is reported and the rest go on; once
    ``cancelled``, the rest are left as they are. The writer and the actor come from the request
    that started it: a background job has no request."""
    for name, expected in targets:
        if cancelled():
            return
        try:
            if action == "set":
                assert count is not None
                outcome = w.set(name, resource, count, expected, who, dry_run=dry_run)
            else:
                outcome = w.remove(name, resource, expected, who, dry_run=dry_run)
        except Exception:  # a node the job could not do is reported; the job goes on
            log.exception("bulk %s of %s on %s failed", action, resource, name)
            why = "could not be done (an error in the dashboard, logged); nothing was written"
            outcome = Outcome(name, resource, action, expected, count, False, why, dry_run, 500)
        report(outcome)


def bulk_preview() -> ResponseReturnValue:
    try:
        action, resource, count, targets = _parse_bulk(request.form)
    except ChangeError as exc:
        return _refused(exc.errors, request.form)
    planned = [(n.name, n.capacity.get(resource)) for n in targets]
    return _start_job(action, resource, count, planned, dry_run=True)


def bulk_apply() -> ResponseReturnValue:
    form = request.form
    try:
        action, resource, count, targets = _parse_bulk(form)
    except ChangeError as exc:
        return _refused(exc.errors, form)
    planned = []
    for node in targets:
        expected, msg = validate_expected(form.get(f"expected-{node.name}"))
        if msg:
            return _refused({"nodes": f"{node.name}: {msg}"}, form)
        planned.append((node.name, expected))
    return _start_job(action, resource, count, planned)


def _start_job(
    action: str,
    resource: str,
    count: int | None,
    planned: list[tuple[str, int | None]],
    dry_run: bool = False,
) -> Response:
    """Apply (or, with ``dry_run``, have the API server check) in the background, node by node,
    and send the browser to the job's page, which shows progress until every node has an
    outcome; a preview's page then offers to apply what passed. Nothing is retried: a failed
    node is listed."""
    job = BulkJob(total=len(planned), dry_run=dry_run, action=action, resource=resource, count=count)
    w, who = writer(), actor()

    def each(job: BulkJob) -> None:
        def report(outcome: Outcome) -> None:
            job.outcomes.append(outcome)
            job.nodes_done += 1

        _run_each(w, who, action, resource, count, planned, dry_run, report, lambda: job.cancelled)

    return start_job(job, each)


def cancel(key: str) -> Response:
    """Stop a running job after the node it is on: the nodes not yet written are left alone."""
    job = process.of().bulk.find(key, job_owner())
    if job is None:
        abort(404, description="There is no such bulk change of yours.")
    job.cancelled = True
    audit.record("bulk_cancelled", security.who(), resource=job.resource, action=job.action, job=key)
    return redirect(url_for("bulk.results", key=key), code=303)


def _impacts(outcomes: list[Outcome]) -> dict[str, Impact]:
    """A preview's removes and decreases: per node, the pods that ask for the resource."""
    cuts = [o for o in outcomes if o.ok and o.old is not None and (o.new is None or o.new < o.old)]
    return {o.node: node_impact(o.node, o.resource, o.new) for o in cuts}


def results(key: str) -> str | Response:
    job = process.of().bulk.find(key, job_owner())
    if job is None:
        abort(404, description="These results are no longer kept; see the node pages for the current state.")
    return page_or_fragment("bulk/_job.html", "bulk/results.html", key=key, **_progress(job))


def _progress(job: BulkJob) -> dict[str, Any]:
    """Where a bulk job stands: its outcomes so far (a page of them), what failed, what a
    preview found ready and what it would leave over-committed."""
    outcomes = list(job.outcomes)  # a snapshot: the job may still be adding
    impacts = _impacts(outcomes) if job.dry_run else {}
    return {
        **paged("outcomes", outcomes, RESULTS_PAGE),
        "job": job,
        "done": job.done,
        "finished": job.nodes_done,
        "outcome_count": len(outcomes),
        "failed": [o for o in outcomes if not o.ok],
        "ready": [o for o in outcomes if o.ok] if job.dry_run and job.done else [],
        "impacts": impacts,
        "over": [i for i in impacts.values() if i.over],
    }
