"""The metrics' own HTTP server: a WSGI server on a fixed pool of threads, started in the worker.

Loaded in the worker only (``app.serving.serve_metrics``), never in gunicorn's master: what the
master imports is copied into the worker page by page as soon as either writes to it.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CONTENT_TYPE_LATEST

from app.base import workers

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
