"""gunicorn settings, shared by ``extres serve`` and the container's gunicorn config.

One worker process with threads: the watch-fed cache lives in that one process
and every request reads it. Several worker processes would each keep a copy of
the cache and each hold its own watches on the API server (N times the memory
and the API load) for no gain: the work per request is small and I/O-bound.
"""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import start_http_server

from app.config import Settings

log = logging.getLogger(__name__)


def serve_metrics(settings: Settings, worker: Any) -> None:
    """In the (one) worker, once the app is loaded: its metrics on their own port."""
    if not settings.metrics_port:
        return
    registry = worker.wsgi.extensions["extres"].metrics.registry
    host = settings.metrics_host or settings.host
    try:
        start_http_server(settings.metrics_port, addr=host, registry=registry)
    except OSError as exc:  # the dashboard still serves; only the metrics are missing
        log.error("cannot serve metrics on %s:%d: %s", host, settings.metrics_port, exc)
        return
    log.info("metrics on http://%s:%d/metrics", host, settings.metrics_port)


REPEATED = "X-Extres-Repeated-Header"


def mark_repeated_identity_headers(settings: Settings, req: Any) -> None:
    """WSGI merges a repeated header into one value, so the app could not tell two
    X-Forwarded-Groups headers from one: name each identity header sent more than once in a
    header of our own, which makes the app refuse the request."""
    names = [name for name, _ in req.headers]
    for header in (settings.user_header, settings.groups_header):
        if names.count(header.upper()) > 1:
            req.headers.append((REPEATED.upper(), header))


def gunicorn_options(settings: Settings) -> dict[str, Any]:
    return {
        "post_worker_init": lambda worker: serve_metrics(settings, worker),
        "pre_request": lambda worker, req: mark_repeated_identity_headers(settings, req),
        "control_socket_disable": True,  # nothing may steer the server from outside its process
        "bind": f"{settings.host}:{settings.port}",
        "workers": 1,
        "worker_class": "gthread",
        "threads": settings.threads,
        "accesslog": "-",
        "errorlog": "-",
        "loglevel": settings.log_level.lower(),
        "worker_tmp_dir": "/tmp",  # the root filesystem is read-only in the container
        "limit_request_line": 8190,
        "graceful_timeout": 10,
    }
