"""Requests made raw: the ApiClient's configuration, auth and connection pool, but none of its
generated API classes.

Why: importing ``CoreV1Api`` builds the pydantic models it names, ~0.6 s and ~21 MiB in a
fresh process, before its first list could even begin; and every call the app makes reads or
writes JSON it decodes itself (msgspec, orjson) anyway. A non-2xx answer raises ApiException,
as the generated calls do, so ``app.kube.api.errors.translate`` reads it the same way.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from app.kube.api.errors import Crowded, Inflated, TooLong, TooMuchAtOnce

if TYPE_CHECKING:
    from kubernetes import client

JSON = "application/json"
JSON_PATCH = "application/json-patch+json"  # a list of operations


def request(
    api: client.ApiClient,
    method: str,
    path: str,
    query: dict[str, Any] | None,
    timeout: float | tuple[float, float],
    payload: Any = None,
    content_type: str = JSON,
) -> Any:
    """urllib3's response, its body not yet read (``body`` reads it)."""
    headers = {"Accept": JSON}
    if payload is not None:
        headers["Content-Type"] = content_type
    method, url, headers, _, post = api.param_serialize(
        method,
        path,
        query_params=list((query or {}).items()),
        header_params=headers,
        auth_settings=["BearerToken"],
    )
    resp = api.call_api(
        method,
        url,
        header_params=headers,
        body=payload,  # encoded by the client (json.dumps) for a JSON content type
        post_params=post,
        _request_timeout=timeout,
    )
    if not 200 <= resp.status <= 299:
        from kubernetes.client.exceptions import ApiException  # loaded with the client ``api`` is

        try:  # a refusal's Status: small, but read within a bound like any answer
            said = body(resp.response, most=ERROR_MOST).decode(errors="replace")
        except (TooLong, OSError):
            said = ""
        raise ApiException.from_response(http_resp=resp, body=said, data=None)
    return resp.response


def get(api: client.ApiClient, path: str, query: dict[str, Any], timeout: float | tuple[float, float]) -> Any:
    return request(api, "GET", path, query, timeout)


READ_PIECE = 256 * 1024  # bytes asked of the connection at a time
# what one answer may hold once decompressed (a server may send gzip unasked): one object (at
# most 1.5 MiB in etcd) or a short list; lists read in pages name their own bound
OBJECT_MOST = 8 << 20
ERROR_MOST = 64 * 1024  # a refusal's Status
# an answer sent compressed (never asked for) past 1 MiB inflated may inflate at most 100 to 1
# (JSON of Kubernetes objects compresses 5 to 30 to 1; a gzip bomb of spaces 1,000 to 1)
INFLATED_FROM, INFLATION_MOST = 1 << 20, 100
# answers read and not yet decoded (pages, a watch event arriving): the dashboard's own cluster's
# (and every answer read one at a time), every member's together, and one member's (a page at its
# most and an event's line); a worker of the chart's small preset holds them all
OWN_MOST, MEMBERS_MOST, MEMBER_MOST = 128 << 20, 128 << 20, 72 << 20
HELD_WAIT = 5.0  # seconds a read waits for room before it is refused


class Held:
    """Bytes of answers read from API servers and not yet decoded, against a bound (and its
    ``within``'s): each answer is bounded by its reader, but ten members each sending the most a
    page may hold, on every kind at once, would together take the worker past its limit. A read
    that would pass a bound waits up to ``HELD_WAIT`` for others to be decoded, then is refused
    (Crowded) and gives its share back. The members share one bound apart from the dashboard's
    own cluster, so members crowding each other never hold its reads."""

    def __init__(self, most: int, within: Held | None = None) -> None:
        self.most, self.held, self.within = most, 0, within
        self._room = threading.Condition()

    def take(self, n: int, wait: float = HELD_WAIT) -> None:
        """Counts ``n`` bytes more, once there is room; TooMuchAtOnce when there is none in this
        bound (its own answers fill it), Crowded when there is none in ``within``'s."""
        deadline = time.monotonic() + wait
        with self._room:
            while self.held + n > self.most:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TooMuchAtOnce(self.most) if self.within is not None else Crowded(self.most, wait)
                self._room.wait(left)
            self.held += n
        if self.within is not None:
            try:
                self.within.take(n, max(0.0, deadline - time.monotonic()))
            except TooLong:
                self.give(n, alone=True)
                raise Crowded(self.within.most, wait) from None

    def give(self, n: int, alone: bool = False) -> None:
        with self._room:
            self.held -= n
            self._room.notify_all()
        if self.within is not None and not alone:
            self.within.give(n)


HELD, MEMBERS = Held(OWN_MOST), Held(MEMBERS_MOST)


def member_share() -> Held:
    """A member cluster's bound, within every member's."""
    return Held(MEMBER_MOST, MEMBERS)


CODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def _pieces(resp: Any) -> Iterator[tuple[bytes, int | None]]:
    """The body in pieces of at most READ_PIECE bytes, each with the bytes sent compressed so far
    (None: not compressed). Inflated here, not by urllib3, which inflates whatever it has read (a
    256 KiB read of a bomb is 256 MiB): each piece inflated is bounded, so a bomb is refused at its
    ratio, its first MiB read. Hand-written for that bound; the codings are the ones urllib3
    would inflate but brotli and zstd, which nothing here asks for or is sent."""
    coding = (resp.headers.get("Content-Encoding") or "identity").strip().lower()
    if coding == "identity":
        for piece in resp.stream(READ_PIECE, decode_content=False):
            yield piece, None
        return
    if coding not in CODINGS:
        raise Inflated(INFLATION_MOST, coding)
    wbits = CODINGS[coding]
    inflate, sent = zlib.decompressobj(wbits), 0
    try:
        for packed in resp.stream(READ_PIECE // 16, decode_content=False):
            sent += len(packed)
            while packed:
                piece = inflate.decompress(packed, READ_PIECE)
                packed = inflate.unconsumed_tail
                if inflate.eof and wbits != zlib.MAX_WBITS:  # a gzip member ended; more may follow
                    packed, inflate = inflate.unused_data, zlib.decompressobj(wbits)
                if piece:
                    yield piece, sent - len(packed)
    except zlib.error as exc:
        raise Inflated(INFLATION_MOST, f"{coding} that does not inflate ({exc})") from None


def body(
    resp: Any, most: int = OBJECT_MOST, keep: bool = False, held: Held = HELD, wait: float = HELD_WAIT
) -> bytearray:
    """A raw response's whole body, grown in one buffer as it arrives; its connection goes back to
    the pool. Read in one call (``resp.data``), a chunked body - every list - is held twice at its
    end: http.client keeps its pieces and then joins them (a 6 MiB page of 500 pods, 12 MiB).
    Past ``most`` bytes TooLong is raised; every byte is counted in ``held`` while it is read
    (Crowded past it), and ``keep``: until the caller, once it has decoded the body, gives
    ``len(body)`` back."""
    whole = bytearray()
    kept = False
    try:
        for piece, sent in _pieces(resp):
            whole += piece
            try:
                held.take(len(piece), wait)
            except TooLong:
                held.give(len(whole) - len(piece))
                whole = bytearray()
                resp.close()  # not read to its end: its connection is closed, not reused
                raise
            if len(whole) > most:
                resp.close()
                raise TooLong(most)
            if sent is not None and len(whole) > INFLATED_FROM and len(whole) > INFLATION_MOST * sent:
                resp.close()
                raise Inflated(INFLATION_MOST)
        kept = keep
        return whole
    finally:
        if not kept:
            held.give(len(whole))
        resp.release_conn()


def call(
    api: client.ApiClient,
    method: str,
    path: str,
    timeout: float,
    *,
    query: dict[str, Any] | None = None,
    payload: Any = None,
    content_type: str = JSON,
) -> Any:
    """The decoded JSON answer of one request."""
    return orjson.loads(body(request(api, method, path, query, timeout, payload, content_type)))
