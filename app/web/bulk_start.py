"""A bulk job started for a request: whose it is (the user, on the request's cluster), its audit
lines, and its results page (app/web/bulk_jobs.py holds the jobs themselves)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from flask import abort, url_for
from werkzeug.wrappers import Response

from app.base import audit
from app.kube.api.writer import Outcome
from app.web import process, security
from app.web.bulk_jobs import BulkJob, JobRefused
from app.web.hx import redirect
from app.web.security import identity
from app.web.viewer import viewer


def job_owner() -> Hashable:
    """Whose a job is: the user, on the cluster of the request's path (the same name signed in
    on another cluster is someone else, and signing out there stops nothing here)."""
    return (viewer().runtime.name, identity().owner)


def start_job(job: BulkJob, each: Callable[[BulkJob], None]) -> Response:
    """Start ``job`` (``each`` does its work) for this user, with its audit lines; its page."""
    job.owner = job_owner()
    acting = security.who()
    trail: dict[str, Any] = {
        "resource": job.resource,
        "new": job.count,
        "action": job.action,
        "nodes": job.total,
    }

    def work(job: BulkJob) -> None:
        each(job)
        if not job.dry_run:
            ok = sum(o.ok for o in job.outcomes)
            left = job.total - job.nodes_done
            audit.record(
                "bulk_finished",
                acting,
                **trail,
                counts={"ok": ok, "failed": len(job.outcomes) - ok, "left": left},
            )

    try:
        key = process.of().bulk.start(job, work)
    except JobRefused as exc:
        abort(429, description=str(exc))
    if not job.dry_run:
        audit.record("bulk_started", acting, **trail, job=key)
    return redirect(url_for("bulk.results", key=key), code=303)


def keep_done(outcomes: list[Outcome]) -> Response:
    """Outcomes already known (a change made at once) kept as a done job, for its page."""
    nodes = len({o.node for o in outcomes})
    job = BulkJob(total=nodes, outcomes=outcomes, done=True, owner=job_owner(), nodes_done=nodes)
    return redirect(url_for("bulk.results", key=process.of().bulk.keep(job)), code=303)
