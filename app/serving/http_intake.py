"""What the HTTP intake decides about the bytes a connection sends, without touching a socket:
when a request has arrived whole (gunicorn's own incremental parser frames it: length, chunked
with extensions and trailers, its limits), what it may hold, whom a connection counts against,
and how many bytes all connections together may hold. The worker (app/serving/http_worker.py) does the
I/O; docs/performance.md "The intake" says why the intake is built this way (measured)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from gunicorn.asgi.parser import LimitRequestHeaders, LimitRequestLine, ParseError, PythonProtocol

from app.domain.addresses import Network, limit_key, networks, trusted
from app.settings.config import Settings

HEAD_LIMITS = {"limit_request_line": 8190, "limit_request_fields": 100, "limit_request_field_size": 8190}
MAX_HEAD = 32 * 1024  # bytes of a request's head, as nginx's default buffers for one (4 x 8k)
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


@dataclass(frozen=True)
class Limits:
    """The intake's bounds, from the settings (app/serving/__init__.py)."""

    max_body: int = 64 * 1024  # bytes of a request body (EXTRES_MAX_REQUEST_BYTES)
    budget: int = 32 << 20  # bytes buffered at once, requests and answers of every connection
    per_client: int = 64  # connections open at once from one address (an IPv6 /64)
    exempt: tuple[Network, ...] = ()  # never limited per address: the trusted proxies and forwarders
    request_deadline: float = 10.0  # seconds a request may take to arrive whole
    write_deadline: float = 10.0  # seconds an answer may take to leave
    answer_held: int = 1 << 20  # bytes of one answer written by the worker's loop, not a thread

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            max_body=settings.max_request_bytes,
            budget=settings.intake_mib << 20,
            per_client=settings.connections_per_client,
            exempt=tuple(networks(settings.trusted_proxies + settings.forwarders)),
        )


class Refused(Exception):
    """A request answered by the intake itself, then the connection closed."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"{status} {reason}")
        self.status, self.reason = status, reason

    def answer(self) -> bytes:
        body = f"{self.reason}\n".encode()
        return (
            f"HTTP/1.1 {self.status} {self.reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body


class _Parser(PythonProtocol):
    """gunicorn's incremental parser, its line limit held for every line: upstream checks a line's
    length only while its CRLF has not arrived, so a chunked body's trailer field of any length
    that arrived whole passed (and gunicorn's own parser then refused it: two answers to one
    request)."""

    __slots__ = ()

    def _find_line(self, limit: int, error: Exception) -> int:
        idx: int = super()._find_line(limit, error)
        if idx > limit:
            raise error
        return idx


class Arrival:
    """One request arriving: its raw bytes (with whatever follows it, pipelined) until whole."""

    __slots__ = ("_body", "_fed", "_max_body", "_parser", "data", "deadline", "wants_continue", "whole")

    def __init__(self, deadline: float, max_body: int) -> None:
        self.data = bytearray()
        self.deadline = deadline
        self.whole = False
        self.wants_continue = False  # "Expect: 100-continue": answered once the head is in
        self._body = 0
        self._fed = 0  # bytes given to the parser: none until the head is in (parsed once, whole)
        self._max_body = max_body
        self._parser = _Parser(
            on_headers_complete=self._head,
            on_body=self._counted,
            on_message_complete=self._done,
            **HEAD_LIMITS,
        )

    def feed(self, chunk: bytes) -> None:
        """Take what arrived; raises Refused when the request can never be served."""
        self.data += chunk
        if self.whole:
            return  # bytes of the next request, pipelined: framed once this one is answered
        if not self._fed:
            end = self.data.find(b"\r\n\r\n", max(0, len(self.data) - len(chunk) - 3))
            if end < 0 or end > MAX_HEAD:
                if len(self.data) > MAX_HEAD:
                    raise Refused(431, "Request Header Fields Too Large")
                return
            chunk = bytes(self.data)
        self._fed += len(chunk)
        try:
            self._parser.feed(chunk)
        except LimitRequestLine as exc:
            raise Refused(414, "URI Too Long") from exc
        except LimitRequestHeaders as exc:
            raise Refused(431, "Request Header Fields Too Large") from exc
        except ParseError as exc:
            raise Refused(400, "Bad Request") from exc

    def _head(self) -> bool:
        length = self._parser.content_length
        if length is not None and length > self._max_body:
            raise Refused(413, "Request Entity Too Large")
        expect = dict(self._parser.headers).get(b"expect", b"")
        self.wants_continue = expect.lower() == b"100-continue" and self._parser.http_version == (1, 1)
        return False  # the body is framed, never skipped

    def _counted(self, chunk: bytes) -> None:
        self._body += len(chunk)
        if self._body > self._max_body:  # chunked: no length to refuse by in advance
            raise Refused(413, "Request Entity Too Large")

    def _done(self) -> None:
        self.whole = True


class Budget:
    """Bytes held by the intake, every connection's together, against one limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._lock = threading.Lock()  # answers are held by the threads, requests by the loop

    def take(self, n: int) -> bool:
        with self._lock:
            if self.held + n > self.limit:
                return False
            self.held += n
            return True

    def give(self, n: int) -> None:
        with self._lock:
            self.held -= n

    def force(self, n: int) -> None:
        """Take ``n`` past the limit: an answer a thread has made is held rather than written by
        the thread (which would wait on the client's reading); the loop then cuts the stalled
        readers holding the most until the budget holds again (``over``)."""
        with self._lock:
            self.held += n

    @property
    def over(self) -> bool:
        return self.held > self.limit


def client_key(peer: object, exempt: tuple[Network, ...]) -> str | None:
    """What a connection from ``peer`` counts against (app/domain/addresses.py); None for a
    trusted proxy (every user behind it shares its address) and for what is not an IP address (a
    Unix socket)."""
    host = peer[0] if isinstance(peer, tuple) and peer and isinstance(peer[0], str) else ""
    key = limit_key(host)
    if key is None or trusted(host, exempt):
        return None
    return key
