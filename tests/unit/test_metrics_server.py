"""The metrics listener is bounded: a flood of idle connections neither grows the process's
threads nor stops a scrape once they are closed or time out."""

from __future__ import annotations

import contextlib
import socket
import threading
import urllib.request

import pytest
from prometheus_client import CollectorRegistry, Counter, generate_latest

from app.serving.metrics_server import METRICS_WAITING, METRICS_WORKERS, start_metrics_server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.waits
def test_idle_connections_take_a_fixed_number_of_threads():
    registry = CollectorRegistry()
    Counter("extres_probe", "A counter for the test.", registry=registry).inc()
    port = free_port()
    server = start_metrics_server(port, "127.0.0.1", lambda: generate_latest(registry), timeout=1.0)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            assert b"extres_probe_total 1.0" in resp.read()
        before = threading.active_count()
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
        try:
            # the pool's threads (at most METRICS_WORKERS) are all the server adds, however many wait
            assert threading.active_count() - before <= METRICS_WORKERS
            refused = 0
            for s in idle:
                s.settimeout(0.2)
                with contextlib.suppress(TimeoutError):
                    refused += s.recv(1) == b""  # closed at once: past workers + waiting
            assert refused >= 60 - METRICS_WORKERS - METRICS_WAITING
        finally:
            for s in idle:
                s.close()
        with urllib.request.urlopen(url, timeout=5) as resp:  # still answers
            assert resp.status == 200
    finally:
        server.shutdown()
        server.server_close()
        server.pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.waits
def test_a_request_trickled_a_byte_at_a_time_is_cut_at_the_deadline():
    """Each byte comes within the silence timeout, so only a whole-request deadline ends it: the
    worker is free again and the next scrape is answered."""
    import time

    registry = CollectorRegistry()
    port = free_port()
    server = start_metrics_server(
        port, "127.0.0.1", lambda: generate_latest(registry), timeout=1.0, deadline=1.5
    )
    try:
        slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(METRICS_WORKERS)]
        cut, rounds = False, 0
        while rounds < 20 and not cut:  # a byte each 0.3 s: within the 1 s silence, past the 1.5 s deadline
            rounds += 1
            for s in slow:
                try:
                    s.sendall(b"G")
                except OSError:
                    cut = True
            time.sleep(0.3)
        assert cut and rounds <= 12, f"the trickling requests were not cut near the deadline ({rounds} bytes)"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            assert resp.status == 200
        for s in slow:
            s.close()
    finally:
        server.shutdown()
        server.server_close()
        server.pool.shutdown(wait=False, cancel_futures=True)
