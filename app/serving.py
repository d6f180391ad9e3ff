"""gunicorn settings, shared by ``extres serve`` and the container's gunicorn config.

One worker process with threads: the watch-fed cache lives in that one process
and every request reads it. Several worker processes would each keep a copy of
the cache and each hold its own watches on the API server (N times the memory
and the API load) for no gain: the work per request is small and I/O-bound.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CONTENT_TYPE_LATEST

from app import logs, malloc, workers
from app.config import Settings
from app.identity_headers import mark_repeated_identity_headers

log = logging.getLogger(__name__)
METRICS_WORKERS = 2  # scrapes answered at once
METRICS_WAITING = 8  # connections held waiting for a worker; past that they are closed at once
METRICS_TIMEOUT = 10.0  # seconds a connection may stay silent
METRICS_DEADLINE = 15.0  # seconds a whole request may take, however it trickles in


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class BoundedWSGIServer(WSGIServer):
    """A WSGI server on a fixed pool of threads: prometheus_client's own starts a thread per
    connection, so a flood of idle connections would grow the process without limit. Past
    ``workers`` busy and ``waiting`` queued, a connection is closed at once; a silent one times
    out, and one that trickles a byte at a time is cut at ``deadline_s``."""

    workers = METRICS_WORKERS
    waiting = METRICS_WAITING
    timeout_s = METRICS_TIMEOUT
    deadline_s = METRICS_DEADLINE

    def server_activate(self) -> None:
        super().server_activate()
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="extres-metrics")
        self.slots = threading.BoundedSemaphore(self.workers + self.waiting)
        self.running: dict[socket.socket, float] = {}  # requests being answered: their deadlines
        self.running_lock = threading.Lock()
        workers.start("metrics-deadline", self._cut_late)

    def _cut_late(self) -> None:
        """One thread for every deadline: a request past its own is shut down, so its blocked read
        returns at once and its worker is free."""
        while True:
            time.sleep(min(0.25, self.deadline_s / 4))
            now = time.monotonic()
            with self.running_lock:
                late = [r for r, until in self.running.items() if until < now]
            for request in late:
                with contextlib.suppress(OSError):  # already closed
                    request.shutdown(socket.SHUT_RDWR)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        request.settimeout(self.timeout_s)
        self.pool.submit(self._handle, request, client_address)

    def _handle(self, request: socket.socket, client_address: Any) -> None:
        with self.running_lock:
            self.running[request] = time.monotonic() + self.deadline_s
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - one bad connection never stops the server
            self.handle_error(request, client_address)
        finally:
            with self.running_lock:
                self.running.pop(request, None)
            self.shutdown_request(request)
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("metrics connection from %s ended early", client_address)


def metrics_app(exposition: Callable[[], bytes]) -> Callable[..., list[bytes]]:
    """A WSGI app answering every path with the scrape."""

    def app(environ: Any, start_response: Any) -> list[bytes]:
        body = exposition()
        start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
        return [body]

    return app


def start_metrics_server(
    port: int,
    host: str,
    exposition: Callable[[], bytes],
    timeout: float = METRICS_TIMEOUT,
    deadline: float = METRICS_DEADLINE,
) -> BoundedWSGIServer:
    """Serve the scrape at ``/metrics`` (any path) on a daemon thread; the server."""
    bounds = {"timeout_s": timeout, "deadline_s": deadline}
    server_class: type[BoundedWSGIServer] = type("Server", (BoundedWSGIServer,), bounds)
    server = make_server(host, port, metrics_app(exposition), server_class, handler_class=_Quiet)
    workers.start("metrics-accept", server.serve_forever)
    return server


def worker_up(settings: Settings, worker: Any) -> None:
    """In the (one) worker, once the app is loaded: the cluster's watches start (after the fork,
    never before it), and the metrics are served on their own port."""
    from app import cel_sandbox, on_worker_start

    cel_sandbox.install()  # before the first sync brings DeviceClasses
    on_worker_start(worker.wsgi)
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

    exposition = metrics_exposition(worker.wsgi)
    host = settings.metrics_host or settings.host
    try:
        start_metrics_server(settings.metrics_port, host, exposition)
    except OSError as exc:  # the dashboard still serves; only the metrics are missing
        log.error("cannot serve metrics on %s:%d: %s", host, settings.metrics_port, exc)
        return
    log.info("metrics on http://%s:%d/metrics", host, settings.metrics_port)


def gunicorn_options(settings: Settings) -> dict[str, Any]:
    return {
        # what the master imported is shared with the worker page for page until written: frozen,
        # the worker's collections never write into it (idle PSS of both 79.8 -> 77.3 MiB)
        "pre_fork": lambda server, worker: gc.freeze(),
        "post_fork": lambda server, worker: malloc.tune(),  # before the worker allocates anything
        "post_worker_init": lambda worker: worker_up(settings, worker),
        # in the worker, once its requests are done: the history's last records are written
        "worker_exit": lambda server, worker: worker_down(worker),
        "pre_request": lambda worker, req: mark_repeated_identity_headers(settings, req),
        "control_socket_disable": True,  # nothing may steer the server from outside its process
        "bind": f"{settings.host}:{settings.port}",
        "workers": 1,
        "worker_class": "app.http_worker.BufferingWorker",  # gthread, fed whole requests
        "threads": settings.threads,
        # every logger, gunicorn's too, as JSON lines on stderr (app.logs); access lines only when
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
