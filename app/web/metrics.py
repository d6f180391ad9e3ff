"""Request latency for Prometheus, timed from before the request is authenticated, refusals
counted by status; the metrics themselves are served on their own port (``app.serving.metrics_server``), never
by the dashboard's routes. Registered before every other hook, so nothing runs before the timer."""

from __future__ import annotations

import time

from flask import Flask, g, request
from werkzeug.wrappers import Response

from app.web.viewer import viewer


def init_app(app: Flask) -> None:
    @app.before_request
    def start_timer() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def record(response: Response) -> Response:
        started = g.get("started")
        if started is not None and request.endpoint != "static":
            seconds = time.perf_counter() - started
            endpoint = request.endpoint or "none"  # no route: one label for every unknown path
            viewer().runtime.metrics.observe(endpoint, request.method, seconds, response.status_code)
        return response
