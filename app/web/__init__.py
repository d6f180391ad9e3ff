"""Blueprints and the glue between Flask and the cluster."""

from __future__ import annotations

import logging
from collections.abc import Callable

from flask import Flask
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from app.base import workers
from app.kube.api.errors import Busy, KubeError, http_status
from app.kube.api.ports import ClusterPort
from app.runtime import reads
from app.runtime.cluster import Runtime, Step
from app.runtime.fleet import Fleet
from app.runtime.fleet_metrics import FleetMetrics
from app.settings.config import Settings
from app.usage.poller import Source
from app.web import filters, process, request_pipeline, routes, security, write_guards
from app.web.bulk_jobs import BulkJobs
from app.web.clusters import ClusterPrefix, home, same_page
from app.web.hx import POLL_MARK, error_page, htmx
from app.web.limits import Limits
from app.web.surface import Page
from app.web.template_cache import template_cache
from app.web.viewer import viewer

log = logging.getLogger(__name__)
BUSY_RETRY = 60  # seconds, when a 429 came with no Retry-After (this app's own budgets are per minute)


def init_app(
    app: Flask, settings: Settings, cluster: ClusterPort | None = None, usage_source: Source | None = None
) -> None:
    htmx.init_app(app)
    local = Runtime(settings, cluster, usage_source)  # this cluster's
    fleet = Fleet.of(local)  # and the members'
    app.wsgi_app = ClusterPrefix(app.wsgi_app, lambda: fleet.members)  # type: ignore[method-assign]
    limits = Limits.for_threads(settings.threads, settings.plans_per_minute)
    app.extensions[process.KEY] = this = process.Process(fleet, limits, BulkJobs(limits.write_slots))
    this.steps = (
        Step(
            "clusters",
            "every cluster's runtime, the local one first",
            lambda: fleet.start(),
            lambda: fleet.stop(),
        ),
        Step(
            "templates",
            "compiled once every pod is counted",
            lambda: _compile_when_counted(app),
            lambda: None,
        ),
    )
    filters.register(app)
    app.jinja_env.bytecode_cache = template_cache(settings.template_cache)
    from app.web import metrics

    metrics.init_app(app)  # first: the timer starts before authentication
    security.init_app(app, settings)
    steps = request_pipeline.pipeline(settings, security.networks(settings.trusted_proxies), this.sessions())
    app.before_request(lambda: request_pipeline.run(steps))  # who asks, and may they: in order
    app.teardown_request(request_pipeline.done)
    write_guards.init_app(app)  # after the pipeline: for the routes whose row says editors
    writes = not (settings.auth_mode == "service-account" and settings.read_only)
    app.config["EXTRES_WRITES"] = writes
    # the pages of app.web.routes' table this mode registers; read-only: no write route exists at
    # all, and a shared link to a form says why there is none (changes_off), never "Not Found"
    routes.register(app, writes, settings.auth_mode == "token")

    @app.context_processor
    def inject_state() -> dict[str, object]:
        return {
            "viewer": viewer(),
            "identity": security.identity,
            "poll_mark": POLL_MARK,
            "nav_sections": routes.NAV,
            "cluster_home": home,
            "same_page": same_page,
        }

    @app.after_request
    def vary_on_htmx(response: Response) -> Response:
        response.vary.add("HX-Request")
        return response

    unchecked = sorted(name for name, bp in app.blueprints.items() if not isinstance(bp, Page))
    if unchecked:
        raise RuntimeError(f"blueprints without declared read rights (make them a Page): {unchecked}")

    @app.errorhandler(KubeError)
    def kube_error(exc: KubeError) -> tuple[str, int, dict[str, str]]:
        log.warning("%s (request %s): %s [%s]", exc.title, security.request_id(), exc.message, exc.detail)
        body, status, headers = error_page(exc.title, exc.message, http_status(exc))
        if isinstance(exc, Busy):
            headers = {**headers, "Retry-After": str(exc.retry_after or BUSY_RETRY)}
        return body, status, headers

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[str, int, dict[str, str]]:
        html, status, headers = error_page(exc.name, exc.description or "", exc.code or 500)
        allow = dict(exc.get_headers()).get("Allow")  # a 405 names the methods that are allowed
        return html, status, {**headers, "Allow": allow} if allow else headers

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> tuple[str, int, dict[str, str]]:
        log.exception("unhandled error")
        message = "The dashboard hit an unexpected error; it has been logged."
        return error_page("Something went wrong", message, 500)


COMPILE_AFTER = 600.0  # seconds the templates wait for every pod to be counted, at most


def on_worker_start(app: Flask) -> None:
    """In the served worker, once the app is loaded (never before the fork): the process's steps
    (every cluster's watches and usage refresh, then the templates) start in the background, so
    the worker serves at once (/healthz answers while the Kubernetes client is still being
    loaded)."""
    workers.start("connect", process.of(app).start)


def _compile_when_counted(app: Flask) -> None:
    """The templates are loaded once every pod is counted (a page asked before then loads what it
    uses): compiled while the first lists were decoded they took ~0.2 s of the first complete
    answer at 5,000 pods (docs/performance.md); from the template cache they take ~0.01 s."""
    runtime = process.of(app).local
    workers.until(lambda: reads.freshness(runtime).synced, COMPILE_AFTER, interval=0.1)
    compile_templates(app)


def on_worker_stop(app: Flask) -> None:
    """In the worker after its last request: the process's steps undone, in reverse (every
    cluster's runtime stops; the history's last records are written)."""
    process.of(app).stop()


def metrics_exposition(app: Flask) -> Callable[[], bytes]:
    """What a scrape of the metrics port gets: every cluster's, labelled, where there are several."""
    return FleetMetrics(process.of(app).fleet).exposition


def compile_templates(app: Flask) -> None:
    """Load every template now, not on the first request that renders it: from the template
    cache (~0.01 s for all), compiled and kept where it has none (~0.3 s; app.web.template_cache)."""
    env = app.jinja_env
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)
