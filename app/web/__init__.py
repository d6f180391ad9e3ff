"""Blueprints and the glue between Flask and the cluster."""

from __future__ import annotations

import logging

from flask import Flask, render_template
from flask_htmx import HTMX
from werkzeug.exceptions import HTTPException

from app.config import Settings
from app.domain.ownership import DevicePluginRule
from app.kube.errors import KubeError
from app.web import filters
from app.web.state import State

htmx = HTMX()
log = logging.getLogger(__name__)


def init_app(app: Flask, settings: Settings) -> None:
    htmx.init_app(app)
    app.extensions["extres"] = State(settings, DevicePluginRule(settings.device_plugin_resources))
    filters.register(app)

    from app.web import changes, health, nodes, overview, pending

    app.register_blueprint(overview.bp)
    app.register_blueprint(nodes.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(changes.bp, url_prefix="/changes")
    app.register_blueprint(pending.bp)

    @app.context_processor
    def inject_state() -> dict[str, object]:
        return {"state": State.get()}

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
