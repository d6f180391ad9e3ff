"""gunicorn's threaded worker, but a request reaches one of its threads only once it has arrived
whole: its head and, by Content-Length, its body (or the first 1 MiB of it).

Why: the gthread worker hands a connection to a thread as soon as its first byte arrives, and
the thread then reads the rest blocking. A client that trickles a byte a second (slowloris) holds
a thread for as long as it likes; eight such clients took every thread and ``/healthz`` went
unanswered for 20 s. Here the worker's own event loop reads each connection's bytes without
blocking as they come, and a request still incomplete ``HEAD_DEADLINE`` seconds after it began
(the connection opened, or a kept-alive one sent its first byte) is cut. An ingress in front
buffers the same way; this keeps a pod reached directly (a port forward, a Service without the
ingress) answering too.
Tested by ``tests/integration/test_slow_clients.py`` (50 trickling clients).
"""

from __future__ import annotations

import contextlib
import re
import selectors
import socket
import time
from functools import partial
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

HEAD_DEADLINE = 10.0  # seconds a request may take to arrive
HANDED_AT = 1 << 20  # bytes buffered: past that the thread reads the rest (the app refuses it)
_LENGTH = re.compile(rb"^content-length:[ \t]*([0-9]{1,12})[ \t]*\r?$", re.I | re.M)
_CHUNKED = re.compile(rb"^transfer-encoding:[^\r\n]*chunked", re.I | re.M)
_CONTINUE = re.compile(rb"^expect:[ \t]*100-continue", re.I | re.M)


def complete(data: bytes | bytearray) -> bool:
    """Whether ``data`` holds a whole request: its head and all of its body."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False
    head, body = data[:end], data[end + 4 :]
    if _CONTINUE.search(head):
        return True  # the client waits for "100 Continue" before its body: the thread sends it
    if _CHUNKED.search(head):
        return body.endswith(b"0\r\n\r\n")
    length = _LENGTH.search(head)
    return len(body) >= (int(length.group(1)) if length else 0)


class BufferingWorker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arriving: dict[Any, tuple[float, bytearray]] = {}  # connection -> (deadline, bytes)

    def enqueue_req(self, conn: Any) -> None:
        read_ahead = conn.parser is not None and conn.parser.unreader.buf.getvalue()
        if self.cfg.is_ssl or read_ahead:  # TLS here: the handshake is the thread's; read ahead: all here
            super().enqueue_req(conn)
            return
        conn.sock.setblocking(False)
        self.arriving[conn] = (time.monotonic() + HEAD_DEADLINE, bytearray())
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._readable, conn))

    def _readable(self, conn: Any, _sock: Any) -> None:
        _, data = self.arriving[conn]
        try:
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away
            self._drop(conn)
            return
        data += chunk
        if complete(data) or len(data) >= HANDED_AT:
            self.poller.unregister(conn.sock)
            del self.arriving[conn]
            conn.init()  # plain HTTP: only the parser is made (the socket blocking again)
            conn.parser.unreader.unread(bytes(data))
            super().enqueue_req(conn)

    def _drop(self, conn: Any) -> None:
        del self.arriving[conn]
        with contextlib.suppress(OSError, KeyError, ValueError):
            self.poller.unregister(conn.sock)
        self.nr_conns -= 1
        with contextlib.suppress(OSError):
            conn.sock.shutdown(socket.SHUT_RDWR)
        conn.close()

    def murder_pending(self) -> None:
        super().murder_pending()
        now = time.monotonic()
        for conn in [c for c, (deadline, _) in self.arriving.items() if deadline < now]:
            self._drop(conn)
