"""gunicorn's threaded worker, with its connections' bytes moved by its own event loop: a thread
gets a request only once it has arrived whole, and the answer it writes is sent by the loop.

Why: gthread hands a connection to a thread at its first byte, and the thread then reads the
rest and writes the answer on a blocking socket. Eight clients sending ~100 bytes each (a
request trickled, or one whole request followed by the start of the next, or an answer never
read) held all eight threads and every page, ``/healthz`` too. Here:

* the loop reads every connection without blocking until gunicorn's own incremental parser says
  the request is whole (app/serving/http_intake.py): head, body by length or chunked (extensions,
  trailers), ``Expect: 100-continue`` answered by the loop; a request still incomplete
  ``request_deadline`` seconds after its first byte is cut, one that can never be served
  (malformed, over the limits) is answered 400/413/431 by the loop;
* what follows a request (pipelined) is framed again by the loop after the answer;
* an answer up to ``answer_held`` bytes is held and sent by the loop within ``write_deadline``,
  past the budget too (a thread never waits on a client's reading: past it the loop cuts the
  stalled readers holding the most, every second, counted in
  ``extres_intake_answers_dropped``); a larger one is written
  by its thread, each write within the deadline (only a signed-in user's export is that large;
  no page open to anyone is); a connection closed
  after its answer lingers in the loop, not in a thread (gunicorn drains it for up to 2 s);
* every byte held, requests and answers, counts against one budget for the worker (past it, the
  connection holding the most is cut); connections per address (IPv6: per /64) are capped, the
  trusted proxies excepted; at ``worker_connections`` the oldest connection with no request in a
  thread is closed to make room rather than accepting nothing;
* every socket has kernel send and receive timeouts as a backstop.
TLS is not served in the process (an ingress in front terminates it). Tested per shape by
tests/web/test_intake.py; measured against the alternatives by bench/intake.py.
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import socket
import struct
import time
from collections import Counter, OrderedDict, deque
from functools import partial
from typing import Any, ClassVar

from gunicorn.workers.gthread import TConn, ThreadWorker

from app.domain.addresses import limit_key
from app.metrics.tallies import ANSWERS_DROPPED
from app.serving.http_intake import CONTINUE, Arrival, Budget, Limits, Refused, client_key

LINGER = 2.0  # seconds a closed connection is drained for, as gunicorn does (RFC 9112 9.6)
STALLED = 1.0  # seconds an answer may leave nothing before its reader counts as stopped (past the budget)
ACCEPTED = 64  # connections taken off the listener per wake-up


class Conn(TConn):
    """gthread's connection, whose close the worker hears of (and makes graceful in its loop)."""

    def __init__(self, worker: BufferingWorker, *args: Any) -> None:
        super().__init__(*args)
        self.worker = worker
        self.continued = False  # the loop answered "100 Continue" for the request in hand

    def close(self, graceful: bool = False) -> None:
        if graceful and self.worker.linger(self):
            return
        super().close()
        self.worker.closed(self)


class Outbox:
    """The socket a thread answers on: what it writes is held, up to ``held_max`` bytes within
    the budget, and sent by the loop; past that the thread sends, within the write deadline."""

    def __init__(self, conn: Conn, budget: Budget, limits: Limits) -> None:
        self.sock, self.continued = conn.sock, conn.continued
        self.budget, self.held_max, self.deadline = budget, limits.answer_held, limits.write_deadline
        self.parts: list[bytes] = []
        self.held = 0
        self.direct = False

    def sendall(self, data: Any) -> None:
        data = bytes(data)
        if not self.direct and self.held + len(data) <= self.held_max:
            if not self.budget.take(len(data)):  # never wait on a reader: hold it, the loop trims
                self.budget.force(len(data))
            self.parts.append(data)
            self.held += len(data)
            return
        self.direct = True
        self.flush()
        self.sock.settimeout(self.deadline)
        self.sock.sendall(data)

    def send(self, data: Any) -> int:
        if self.continued and bytes(data) == CONTINUE:
            return len(data)  # the loop said it already
        self.sendall(data)
        return len(data)

    def flush(self) -> None:
        """Sends what is held, from the thread (a large answer, or a close)."""
        parts, held = self.parts, self.held
        self.parts, self.held = [], 0
        try:
            if parts:
                self.sock.settimeout(self.deadline)
                self.sock.sendall(b"".join(parts))
        finally:
            self.budget.give(held)

    def shutdown(self, how: int) -> None:
        self.flush()
        self.sock.shutdown(how)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


class Leaving:
    """An answer the loop is sending."""

    __slots__ = ("data", "deadline", "future", "held", "moved")

    def __init__(self, outbox: Outbox, deadline: float, future: Any) -> None:
        self.data = memoryview(b"".join(outbox.parts))
        self.held, self.deadline, self.future = outbox.held, deadline, future
        self.moved = time.monotonic()  # when its last bytes left


class BufferingWorker(ThreadWorker):
    limits: ClassVar[Limits] = Limits()

    @classmethod
    def configured(cls, limits: Limits) -> type[BufferingWorker]:
        return type(cls.__name__, (cls,), {"limits": limits, "__module__": __name__})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.budget = Budget(self.limits.budget)
        self.arriving: dict[Conn, Arrival] = {}  # insertion order: oldest first
        self.leaving: dict[Conn, Leaving] = {}
        self.lingering: dict[Conn, float] = {}
        self.answered: dict[Conn, Outbox] = {}  # set by a thread, taken by the loop
        self.clients: Counter[str] = Counter()
        self.client_of: dict[Conn, str] = {}
        # requests arrived whole, waiting for a thread, per client address (an IPv6 /64), taken
        # in turn: one address's flood waits behind its own requests, not ahead of everyone's
        self.ready: OrderedDict[str, deque[Conn]] = OrderedDict()
        self.busy = 0  # requests in the threads

    # -- connections come and go (the loop) -------------------------------------------------------

    def accept(self, listener: Any) -> None:
        """The connections waiting on the listener, up to ACCEPTED at a time (one per wake-up left
        a probe behind a crowd's hundreds in the kernel's queue)."""
        for _ in range(ACCEPTED):
            try:
                sock, addr = listener.accept()
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                    raise
                return
            self._accepted(listener, sock, addr)

    def _accepted(self, listener: Any, sock: socket.socket, addr: Any) -> None:
        key = client_key(addr, self.limits.exempt)
        if key is not None and self.clients[key] >= self.limits.per_client:
            _answer_and_close(sock, Refused(429, "Too Many Connections From One Address"))
            return
        _kernel_deadlines(sock, self.limits.write_deadline)
        conn = Conn(self, self.cfg, sock, addr, listener.getsockname())
        self.nr_conns += 1
        if key is not None:
            self.clients[key] += 1
            self.client_of[conn] = key
        self.enqueue_req(conn)
        while self.nr_conns >= self.worker_connections and self._make_room():
            pass

    def _make_room(self) -> bool:
        """Closes the oldest connection no thread holds: one arriving, else one kept alive."""
        if self.arriving:
            self._drop(next(iter(self.arriving)))
            return True
        if self.keepalived_conns:
            conn = self.keepalived_conns.popleft()
            with contextlib.suppress(OSError, KeyError, ValueError):
                self.poller.unregister(conn.sock)
            self.nr_conns -= 1
            conn.close()
            return True
        return False

    def closed(self, conn: Conn) -> None:
        """Whatever a closed connection held is let go."""
        if (key := self.client_of.pop(conn, None)) is not None:
            self.clients[key] -= 1
            if not self.clients[key]:
                del self.clients[key]
        if (arrival := self.arriving.pop(conn, None)) is not None:
            self.budget.give(len(arrival.data))
        if (leaving := self.leaving.pop(conn, None)) is not None:
            self.budget.give(leaving.held)
        self.lingering.pop(conn, None)

    def _drop(self, conn: Conn, answer: Refused | None = None) -> None:
        with contextlib.suppress(OSError, KeyError, ValueError):
            self.poller.unregister(conn.sock)
        if answer is not None:
            with contextlib.suppress(OSError):
                conn.sock.send(answer.answer())  # non-blocking: what fits, or nothing
        self.nr_conns -= 1
        conn.close()

    def linger(self, conn: Conn) -> bool:
        """A graceful close in the loop: our side shut, the client's bytes drained until it
        closes or ``LINGER`` s pass (gunicorn does this in its loop, blocking it)."""
        try:
            conn.sock.shutdown(socket.SHUT_WR)
            conn.sock.setblocking(False)
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._drain, conn))
        except (OSError, ValueError, KeyError):
            return False
        self.lingering[conn] = time.monotonic() + LINGER
        return True

    def _drain(self, conn: Conn, _sock: Any) -> None:
        try:
            if conn.sock.recv(65536):
                return
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        self._end_linger(conn)

    def _end_linger(self, conn: Conn) -> None:
        with contextlib.suppress(OSError, KeyError, ValueError):
            self.poller.unregister(conn.sock)
        conn.close()

    def murder_pending(self) -> None:
        super().murder_pending()
        now = time.monotonic()
        stopping = not self.alive  # then a connection that has sent nothing is not waited for
        for conn in [c for c, a in self.arriving.items() if a.deadline < now or (stopping and not a.data)]:
            self._drop(conn, Refused(408, "Request Timeout") if self.arriving[conn].data else None)
        for conn in [c for c, leaving in self.leaving.items() if leaving.deadline < now]:
            self._drop(conn)
        self._trim(now)
        for conn in [c for c, deadline in self.lingering.items() if deadline < now]:
            self._end_linger(conn)

    # -- a request arrives (the loop) -------------------------------------------------------------

    def enqueue_req(self, conn: Any) -> None:
        if self.cfg.is_ssl:  # the handshake is a thread's; TLS is terminated in front of the pod
            self._queue(conn)
            return
        tail = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        conn.parser, conn.initialized, conn.continued = None, False, False
        conn.sock.setblocking(False)
        arrival = Arrival(time.monotonic() + self.limits.request_deadline, self.limits.max_body)
        self.arriving[conn] = arrival
        if tail and not self._take(conn, arrival, tail):
            return
        if arrival.whole:
            self._hand(conn)
            return
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._readable, conn))

    def _readable(self, conn: Conn, _sock: Any) -> None:
        try:
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away
            self._drop(conn)
            return
        arrival = self.arriving[conn]
        if self._take(conn, arrival, chunk) and arrival.whole:
            self.poller.unregister(conn.sock)
            self._hand(conn)

    def _take(self, conn: Conn, arrival: Arrival, chunk: bytes) -> bool:
        """Feeds ``chunk`` to the arrival; False if the connection was answered and closed."""
        if not self.budget.take(len(chunk)):
            largest = max(self.arriving, key=lambda c: len(self.arriving[c].data))
            self._drop(largest, Refused(503, "Service Unavailable"))
            if largest is conn or not self.budget.take(len(chunk)):
                if conn in self.arriving:
                    self._drop(conn, Refused(503, "Service Unavailable"))
                return False
        wanted = arrival.wants_continue
        try:
            arrival.feed(chunk)
        except Refused as refused:
            self._drop(conn, refused)
            return False
        if arrival.wants_continue and not wanted and not arrival.whole:
            with contextlib.suppress(OSError):
                conn.sock.send(CONTINUE)
                conn.continued = True
        return True

    def _hand(self, conn: Conn) -> None:
        arrival = self.arriving.pop(conn)
        self.budget.give(len(arrival.data))
        conn.init()  # plain HTTP: only gunicorn's parser is made (the socket blocking again)
        conn.parser.unreader.unread(bytes(arrival.data))
        self._queue(conn)

    def _queue(self, conn: Conn) -> None:
        """A request for a thread: in its address's turn (gunicorn's pool takes them first come,
        first served: 2,100 pipelined requests from 14 addresses would each go before a probe)."""
        host = conn.client[0] if isinstance(conn.client, tuple) and conn.client else ""
        self.ready.setdefault(limit_key(host) or "", deque()).append(conn)
        self._dispatch()

    def _dispatch(self) -> None:
        while self.ready and self.busy < self.cfg.threads:
            address, waiting = next(iter(self.ready.items()))
            conn = waiting.popleft()
            if waiting:
                self.ready.move_to_end(address)  # the next address's turn
            else:
                del self.ready[address]
            self.busy += 1
            super().enqueue_req(conn)

    # -- the answer (a thread, then the loop) -----------------------------------------------------

    def handle_request(self, req: Any, conn: Any) -> bool:
        real = conn.sock
        outbox = Outbox(conn, self.budget, self.limits)
        conn.sock = outbox
        try:
            return bool(super().handle_request(req, conn))
        finally:
            conn.sock = real
            self.answered[conn] = outbox

    def finish_request(self, conn: Any, fs: Any) -> None:
        self.busy -= 1  # its thread is free: the next address's request takes it
        try:
            self._finished(conn, fs)
        finally:
            self._dispatch()

    def _finished(self, conn: Any, fs: Any) -> None:
        outbox = self.answered.pop(conn, None)
        if outbox is None or not outbox.parts:
            super().finish_request(conn, fs)
            return
        leaving = Leaving(outbox, time.monotonic() + self.limits.write_deadline, fs)
        self.leaving[conn] = leaving
        try:
            conn.sock.setblocking(False)
            self.poller.register(conn.sock, selectors.EVENT_WRITE, partial(self._writable, conn))
        except (OSError, ValueError, KeyError):
            self._drop(conn)

    def _trim(self, now: float) -> None:
        """Past the budget, the answers whose readers have stopped (nothing left for
        ``STALLED`` s) are dropped with their connections, the most held first, until it holds:
        a client that stops reading never makes a thread wait, nor holds the worker's memory."""
        if not self.budget.over:
            return
        stalled = sorted(
            (c for c, leaving in self.leaving.items() if now - leaving.moved >= STALLED),
            key=lambda c: -self.leaving[c].held,
        )
        for conn in stalled:
            if not self.budget.over:
                break
            self._drop(conn)
            ANSWERS_DROPPED.add()

    def _writable(self, conn: Conn, _sock: Any) -> None:
        leaving = self.leaving[conn]
        try:
            sent = conn.sock.send(leaving.data)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(conn)
            return
        if sent:
            leaving.moved = time.monotonic()
        leaving.data = leaving.data[sent:]
        if leaving.data:
            return
        self.poller.unregister(conn.sock)
        del self.leaving[conn]
        self.budget.give(leaving.held)
        super().finish_request(conn, leaving.future)


def _kernel_deadlines(sock: socket.socket, seconds: float) -> None:
    """SO_RCVTIMEO and SO_SNDTIMEO: a blocking read or write that moves nothing for ``seconds``
    fails, whoever made the socket blocking again."""
    whole = int(seconds)
    timeval = struct.pack("ll", whole, int((seconds - whole) * 1e6))
    for option in (socket.SO_RCVTIMEO, socket.SO_SNDTIMEO):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, option, timeval)


def _answer_and_close(sock: socket.socket, refused: Refused) -> None:
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        sock.send(refused.answer())
    with contextlib.suppress(OSError):
        sock.close()
