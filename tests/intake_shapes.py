"""Clients that try to hold a server with few bytes, each a shape of request, and the probe that
asks ``/healthz`` meanwhile. Used by tests/web/test_intake.py (each shape against the served
app) and bench/intake.py (each shape against each candidate server).

Every client connects from its own loopback address (127.1.x.y, each holding at most 50
connections), so a server's limit per address does not decide the outcome of a shape meant
for its other defences; the probe connects from 127.0.0.1. Every loop here is bounded by a stop
event and a count."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

PER_SOURCE = 50


def source(i: int) -> str:
    """The loopback address of the i-th client connection."""
    n = i // PER_SOURCE
    return f"127.1.{n // 250}.{n % 250 + 1}"


def connect(port: int, i: int, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((source(i), 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def _send(s: socket.socket, data: bytes) -> bool:
    try:
        s.sendall(data)
        return True
    except OSError:
        return False


def _trickle(s: socket.socket, data: bytes, stop: threading.Event) -> None:
    for byte in data:
        if stop.wait(0.5) or not _send(s, bytes([byte])):
            return


def _lines(n: int, size: int) -> bytes:
    return b"".join(b"X-%d: %s\r\n" % (i, b"h" * size) for i in range(n))


HEAD = b"Host: 127.0.0.1\r\nUser-Agent: shape\r\n"  # a name the dashboard answers to
PAGE = b"GET /static/htmx.min.js HTTP/1.1\r\n" + HEAD + b"\r\n"


@dataclass(frozen=True)
class Shape:
    name: str
    connections: int
    opening: bytes  # sent at once on each connection
    trickled: bytes = b""  # then a byte every 0.5 s
    rcvbuf: int | None = None  # the client's receive buffer (a slow reader keeps it small)


SHAPES = [
    Shape("trickled head", 8, b"GET /healthz HTTP/1.1\r\n" + HEAD, b"X-Slow: " + b"y" * 200),
    Shape(
        "trickled body",
        8,
        b"POST /login HTTP/1.1\r\n" + HEAD + b"Content-Length: 400\r\nContent-Type: text/plain\r\n\r\n",
        b"z" * 400,
    ),
    Shape(
        "a whole request, then the start of the next", 8, b"GET /healthz HTTP/1.1\r\n" + HEAD + b"\r\nGET /"
    ),
    Shape("pipelined, answers never read", 8, PAGE * 300, rcvbuf=4096),
    # the review's flood: many connections, three static files each, a receive window of 4 KiB
    # (on loopback the kernel's buffers would swallow whole answers; tests/integration/
    # test_slow_readers.py holds it on a 1,500-byte MTU link)
    Shape("slow readers: 3 static files each, never read, 700 connections", 700, PAGE * 3, rcvbuf=4096),
    Shape(
        "Expect: 100-continue, no body",
        8,
        b"POST /login HTTP/1.1\r\n" + HEAD + b"Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n",
    ),
    Shape(
        "chunked, its data ending in 0 CRLF CRLF",
        8,
        b"POST /login HTTP/1.1\r\n" + HEAD + b"Transfer-Encoding: chunked\r\n\r\n20\r\n0\r\n\r\n",
    ),
    Shape(
        "Content-Length of 13 digits",
        8,
        b"POST /login HTTP/1.1\r\n" + HEAD + b"Content-Length: 1234567890123\r\n\r\nabc",
    ),
    Shape(
        "heads of 1 MiB, 1,000 connections",
        1000,
        b"GET /healthz HTTP/1.1\r\n" + HEAD + _lines(131, 8000),
    ),
    Shape(
        "heads of 30 KiB never ended, 1,000 connections",
        1000,
        b"GET /healthz HTTP/1.1\r\n" + HEAD + _lines(30, 1000),
    ),
    Shape("idle, 1,000 connections", 1000, b""),
]


class Attack:
    """A shape's connections, opened and held (trickling where the shape says) until stopped."""

    def __init__(self, shape: Shape, port: int) -> None:
        self.shape, self.port = shape, port
        self.stop = threading.Event()
        self.socks: list[socket.socket] = []
        self.threads: list[threading.Thread] = []
        self.refused = 0

    def __enter__(self) -> Attack:
        for i in range(self.shape.connections):
            try:
                s = connect(self.port, i, self.shape.rcvbuf)
            except OSError:
                self.refused += 1
                continue
            self.socks.append(s)
            if self.shape.opening:
                threading.Thread(target=_send, args=(s, self.shape.opening), daemon=True).start()
            if self.shape.trickled:
                t = threading.Thread(target=_trickle, args=(s, self.shape.trickled, self.stop), daemon=True)
                t.start()
                self.threads.append(t)
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for s in self.socks:
            with contextlib.suppress(OSError):
                s.close()
        for t in self.threads:
            t.join(timeout=5)


def probe(url: str, timeout: float = 5.0) -> float:
    """Seconds until ``url`` answered (any status); ``timeout`` when it did not."""
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            resp.read()
    except urllib.error.HTTPError:
        pass
    except OSError:
        return timeout
    return time.monotonic() - start


def worst_probe(url: str, seconds: float, every: float = 0.2, timeout: float = 5.0) -> float:
    """The slowest of the probes of ``url`` made over ``seconds`` (at most seconds/every + 1)."""
    worst = 0.0
    end = time.monotonic() + seconds
    for _ in range(int(seconds / every) + 1):
        worst = max(worst, probe(url, timeout))
        if time.monotonic() >= end:
            break
        time.sleep(every)
    return worst


def exchange(port: int, data: bytes, until: Callable[[bytes], bool], timeout: float = 5.0) -> bytes:
    """Sends ``data`` on one connection and reads until ``until`` holds of what came back (or the
    server closed, or ``timeout`` passed)."""
    got = b""
    with connect(port, 0) as s:
        s.sendall(data)
        end = time.monotonic() + timeout
        while not until(got) and time.monotonic() < end:
            s.settimeout(max(0.01, end - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            got += chunk
    return got
