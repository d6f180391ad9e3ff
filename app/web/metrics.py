"""Request latency for Prometheus; the metrics themselves are served on their own port
(``app.serving``), never by the dashboard's routes."""

from __future__ import annotations

import time

from flask import Flask, g, request

from app.web.services import Services


def init_app(app: Flask) -> None:
    @app.before_request
    def start_timer() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def record(response):
        started = g.get("started")
        if started is not None and request.endpoint not in (None, "static"):
            Services.get().metrics.observe(request.endpoint, request.method, time.perf_counter() - started)
        return response
