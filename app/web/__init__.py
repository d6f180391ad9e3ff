"""Blueprints and the glue between Flask and the cluster."""

from __future__ import annotations

import logging

from flask import Flask, current_app, g, render_template
from flask_htmx import HTMX
from werkzeug.exceptions import HTTPException

from app.config import Settings
from app.kube.cluster import ClusterPort
from app.kube.errors import KubeError
from app.web import filters, security
from app.web.bulk_jobs import BulkJobs
from app.web.render_cache import RenderCaches
from app.web.services import Services

htmx = HTMX()
log = logging.getLogger(__name__)


def init_app(app: Flask, settings: Settings, cluster: ClusterPort | None = None) -> None:
    htmx.init_app(app)
    app.extensions["extres"] = Services(settings, cluster)
    app.extensions["extres_render"] = RenderCaches()
    app.extensions["extres_bulk"] = BulkJobs()
    filters.register(app)
    security.init_app(app, settings)

    from app.web import auth, changes, health, history, metrics, nodes, overview, pending, plan, workloads

    metrics.init_app(app)
    app.register_blueprint(overview.bp)
    app.register_blueprint(nodes.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(pending.bp)
    app.register_blueprint(plan.bp)
    app.register_blueprint(workloads.bp)
    app.register_blueprint(history.bp)
    writes = not (settings.auth_mode == "service-account" and settings.read_only)
    app.config["EXTRES_WRITES"] = writes
    if writes:  # read-only: no write route exists at all
        app.register_blueprint(changes.bp, url_prefix="/changes")
    if settings.auth_mode == "token":
        app.register_blueprint(auth.bp)

    @app.context_processor
    def inject_state() -> dict[str, object]:
        return {"state": Services.get(), "can_write": can_write, "identity": security.identity}

    @app.after_request
    def vary_on_htmx(response):
        response.vary.add("HX-Request")
        return response

    @app.errorhandler(KubeError)
    def kube_error(exc: KubeError):
        status = exc.status if 400 <= exc.status < 600 else 503
        return render_template("error.html", title=exc.title, message=exc.message), status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return (
            render_template("error.html", title=exc.name, message=exc.description),
            exc.code or 500,
        )

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        log.exception("unhandled error")
        return (
            render_template(
                "error.html",
                title="Something went wrong",
                message="The dashboard hit an unexpected error; it has been logged.",
            ),
            500,
        )


def can_write() -> bool:
    """Whether to show write forms: asked once per request (SelfSubjectAccessReview)."""
    if "can_write" not in g:
        try:
            g.can_write = (
                current_app.config["EXTRES_WRITES"]
                and security.verified()
                and Services.get().cluster.access.can_edit(security.identity())
            )
        except KubeError:
            g.can_write = False
    return bool(g.can_write)
