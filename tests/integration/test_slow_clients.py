"""Slow clients against the app served as in the container: fifty connections trickling their
requests a byte at a time hold none of the worker's threads (app/serving/http_worker.py buffers each
request until it is whole), so /healthz and pages answer meanwhile; a trickler that finishes is
answered, and one still incomplete past the deadline is answered 408 and cut."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pytest

from app.serving.http_intake import Limits
from tests.serving import Server

pytestmark = pytest.mark.kube
SLOW = 50


def test_fifty_slow_clients_take_no_thread_and_the_pages_answer(control_plane):
    server = Server(control_plane)
    stop = threading.Event()
    answers: dict[int, bytes] = {}

    def trickle(i: int, finish: bool) -> None:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
            request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"y" * 40 + b"\r\n\r\n"
            for byte in request[:-4]:
                if stop.is_set():
                    break
                s.sendall(bytes([byte]))
                time.sleep(0.1)
            if finish:
                s.sendall(request[-4:])
            try:
                answers[i] = s.recv(200)
            except OSError:
                answers[i] = b""

    threads = [threading.Thread(target=trickle, args=(i, i == 0), daemon=True) for i in range(SLOW)]
    try:
        for t in threads:
            t.start()
        time.sleep(2)  # every trickler connected and sending
        served = 0
        for path in ["/healthz", "/", "/healthz", "/pending/", "/healthz"]:
            with urllib.request.urlopen(server.url + path, timeout=5) as resp:  # fails if no thread is free
                served += resp.status == 200
        assert served == 5
        for t in threads:
            t.join(timeout=Limits().request_deadline + 20)
        assert answers[0].startswith(b"HTTP/1.1 200"), answers[0]  # a slow request that finished
        cut = [i for i in range(1, SLOW) if answers.get(i, b"").startswith(b"HTTP/1.1 408")]
        print(f"\n{SLOW} trickling clients: 5 of 5 pages answered meanwhile; {len(cut)} cut at the deadline")
        assert len(cut) == SLOW - 1  # cut once past the request deadline
    finally:
        stop.set()
        server.kill()
