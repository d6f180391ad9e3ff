"""gunicorn settings, shared by ``extres serve`` and the container's gunicorn config.

One worker process with threads: the watch-fed cache lives in that one process
and every request reads it. Several worker processes would each keep a copy of
the cache and each hold its own watches on the API server (N times the memory
and the API load) for no gain: the work per request is small and I/O-bound.
"""

from __future__ import annotations

import gc
import logging
from typing import Any

from app.base import logs
from app.settings.config import Settings
from app.settings.identity_headers import mark_repeated_identity_headers

log = logging.getLogger(__name__)


def worker_up(settings: Settings, worker: Any) -> None:
    """In the (one) worker, once the app is loaded: the cluster's watches start (after the fork,
    never before it), and the metrics are served on their own port."""
    from app import on_worker_start

    on_worker_start(worker.wsgi)  # the selector evaluator was chosen when the app was built
    serve_metrics(settings, worker)


def worker_down(worker: Any) -> None:
    """In the worker, after its last request (a graceful stop: SIGTERM, a rolling update, a
    drain): the watches stop and what the history still holds is written."""
    from app import on_worker_stop

    wsgi = getattr(worker, "wsgi", None)
    if wsgi is not None:
        on_worker_stop(wsgi)


def serve_metrics(settings: Settings, worker: Any) -> None:
    if not settings.metrics_port:
        return
    from app import metrics_exposition
    from app.serving.metrics_server import start_metrics_server

    exposition = metrics_exposition(worker.wsgi)
    host = settings.metrics_host or settings.host
    try:
        start_metrics_server(settings.metrics_port, host, exposition)
    except OSError as exc:  # the dashboard still serves; only the metrics are missing
        log.error("cannot serve metrics on %s:%d: %s", host, settings.metrics_port, exc)
        return
    log.info("metrics on http://%s:%d/metrics", host, settings.metrics_port)


def _tune_malloc() -> None:
    from app.serving import malloc

    malloc.tune()


def _worker_class(settings: Settings) -> type:
    from app.serving.http_intake import Limits
    from app.serving.http_worker import BufferingWorker

    return BufferingWorker.configured(Limits.of(settings))


def gunicorn_options(settings: Settings) -> dict[str, Any]:
    return {
        # what the master imported is shared with the worker page for page until written: frozen,
        # the worker's collections never write into it (idle PSS of both 79.8 -> 77.3 MiB)
        "pre_fork": lambda server, worker: gc.freeze(),
        "post_fork": lambda server, worker: _tune_malloc(),  # before the worker allocates anything
        "post_worker_init": lambda worker: worker_up(settings, worker),
        # in the worker, once its requests are done: the history's last records are written
        "worker_exit": lambda server, worker: worker_down(worker),
        "pre_request": lambda worker, req: mark_repeated_identity_headers(settings, req),
        "control_socket_disable": True,  # nothing may steer the server from outside its process
        "bind": f"{settings.host}:{settings.port}",
        "workers": 1,
        "worker_class": _worker_class(settings),  # gthread, fed whole requests
        "threads": settings.threads,
        "worker_connections": settings.connections,
        "sendfile": False,  # every answer goes through the worker's outbox (app/serving/http_worker.py)
        # every logger, gunicorn's too, as JSON lines on stderr (app.base.logs); access lines only when
        # EXTRES_ACCESS_LOG is set
        "logconfig_dict": logs.config(settings.log_level, settings.access_log),
        "loglevel": settings.log_level.lower(),
        "worker_tmp_dir": "/tmp",  # the root filesystem is read-only in the container
        "limit_request_line": 8190,
        "graceful_timeout": 15,  # requests finish, then the history is written (worker_down)
    }


def serve_app(settings: Settings) -> None:
    """gunicorn with one worker and threads, so every request shares one cluster cache."""
    from gunicorn.app.base import BaseApplication

    from app import create_app  # the app is loaded by the server, not by whoever imports this

    class Server(BaseApplication):
        def __init__(self, options: dict[str, Any]) -> None:
            self.options = options
            super().__init__()

        def load_config(self) -> None:
            for key, value in self.options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return create_app(settings)

    Server(gunicorn_options(settings)).run()
