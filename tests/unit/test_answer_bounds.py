"""Every answer read from an API server is bounded after decompression (a member's server may send
gzip unasked: 0.7 MB of it was 780 MiB): a list page past ``PAGE_MOST`` and a watch event's line
past ``LINE_MOST`` are refused, naming the limit, with no more held than the bound."""

from __future__ import annotations

import gzip
import io
import os
import tracemalloc

import pytest
from urllib3.response import HTTPResponse

from app.kube.api import listing
from app.kube.api.errors import AnswerTooLarge, Crowded, TooLong, TooMuchAtOnce, Unavailable, translate
from app.kube.api.raw import Held, body
from tests.helpers import eventually

GZIP = {"Content-Encoding": "gzip"}


def gzip_of(data_mib: int, byte: bytes | None = b"\0") -> HTTPResponse:
    """``data_mib`` MiB, gzipped: of one byte repeated (a bomb: 1,000 to 1, one gzip member per
    MiB, as a gzip stream may be), or (None) random."""
    if byte is not None:
        packed = gzip.compress(byte * (1 << 20), compresslevel=9) * data_mib
    else:  # random bytes do not compress: the fastest level packs them as well as any
        packed = gzip.compress(os.urandom(data_mib << 20), compresslevel=1)
    return HTTPResponse(
        io.BytesIO(packed), headers={"Content-Encoding": "gzip"}, status=200, preload_content=False
    )


def Page(data: bytes) -> HTTPResponse:
    return HTTPResponse(io.BytesIO(data), status=200, preload_content=False)


def test_a_gzip_body_of_several_members_is_read_whole():
    """RFC 1952: a gzip stream is one or more members; each is inflated, not only the first."""
    parts = [b'{"items": [', b'{"a": 1}, {"b": 2}', b"]}"]
    packed = b"".join(gzip.compress(p) for p in parts)
    for size in (1, 7, len(packed)):  # however the members fall across the reads
        pieces = [packed[i : i + size] for i in range(0, len(packed), size)]
        resp = HTTPResponse(io.BytesIO(packed), headers=GZIP, status=200, preload_content=False)
        resp.stream = lambda amt=None, decode_content=False, _p=pieces: iter(_p)  # type: ignore[method-assign]
        assert bytes(body(resp)) == b"".join(parts)


def test_a_gzip_bomb_is_refused_long_before_its_bound():
    bomb = gzip_of(256)  # 256 MiB inflated, 250 KiB on the wire, sent unasked
    tracemalloc.start()
    try:
        with pytest.raises(TooLong) as refused:
            body(bomb, most=64 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20  # its first MiB and a piece, never the bound, never the 256 MiB
    assert translate(refused.value).message == (
        "Refused: answer too large (an answer compressed unasked, inflating more than 100 to 1)."
    )


@pytest.mark.parametrize("answer", [lambda: gzip_of(12, None), lambda: Page(b" " * (12 << 20))])
def test_an_answer_past_its_bound_once_inflated_is_refused_naming_it(answer):
    with pytest.raises(TooLong) as refused:
        body(answer(), most=8 << 20)
    err = translate(refused.value)
    assert isinstance(err, AnswerTooLarge) and err.message == (
        "Refused: answer too large (an answer over 8 MiB, the most read of one)."
    )
    assert isinstance(translate(TooMuchAtOnce(72 << 20)), AnswerTooLarge)
    crowded = translate(Crowded(128 << 20, 5.0))  # no room now: read again later, not refused
    assert isinstance(crowded, Unavailable) and not isinstance(crowded, AnswerTooLarge)


def test_a_watch_line_that_never_ends_is_refused(monkeypatch):
    class Endless:
        def stream(self, amt=None, decode_content=False):
            while True:
                yield b"x" * (1 << 20)

        def release_conn(self):
            pass

    monkeypatch.setattr(listing, "LINE_MOST", 4 << 20)
    held = Held(64 << 20)
    requests = listing.Requests(None, page_size=500, watch_timeout=1, live_pods_only=False, held=held)  # type: ignore[arg-type]
    monkeypatch.setattr(requests, "get", lambda *a, **k: Endless())
    with pytest.raises(TooLong, match="a watch event over 4 MiB"):
        list(requests.lines("pods", "1", lambda: None))
    assert held.held == 0  # what the line held is given back


def test_members_share_one_bound_apart_from_the_dashboards_own_cluster():
    """Each member is bounded, and every member together: a member's read that finds no room
    waits, then is refused (Crowded) with its share given back; the own cluster's bound is
    another, which members never fill."""
    members = Held(100 << 20)
    a, b = Held(72 << 20, members), Held(72 << 20, members)
    own = Held(128 << 20)
    with pytest.raises(TooLong):
        body(Page(b" " * (65 << 20)), most=64 << 20, held=a)  # refused at its most, nothing kept
    assert a.held == members.held == 0
    kept = body(Page(b" " * (60 << 20)), most=64 << 20, keep=True, held=a)  # read, not yet decoded
    assert a.held == members.held == len(kept) == 60 << 20
    with pytest.raises(Crowded):  # b finds 40 MiB of room among the members
        body(Page(b" " * (60 << 20)), most=64 << 20, held=b, wait=0.2)
    assert b.held == 0 and members.held == 60 << 20
    with pytest.raises(TooMuchAtOnce):  # a's own answers fill a's bound: a's answers are refused
        body(Page(b" " * (20 << 20)), most=64 << 20, held=a, wait=0.2)
    assert a.held == members.held == 60 << 20
    assert len(body(Page(b" " * (60 << 20)), most=64 << 20, held=own)) == 60 << 20  # own reads on
    a.give(len(kept))
    assert a.held == members.held == own.held == 0


def test_a_list_whose_reader_fails_gives_back_every_page_it_read(monkeypatch):
    held = Held(64 << 20)
    requests = listing.Requests(None, page_size=1, watch_timeout=1, live_pods_only=False, held=held)  # type: ignore[arg-type]
    pages = iter([b'{"metadata":{"continue":"2"},"items":[]}', b'{"metadata":{},"items":[]}'])
    monkeypatch.setattr(requests, "get", lambda *a, **k: Page(next(pages)))

    def fail(page: bytearray) -> None:
        raise ValueError("undecodable")

    with pytest.raises(ValueError):
        requests.pages("nodes", fail)
    eventually(lambda: held.held == 0, timeout=5)  # the page read ahead too, once it arrives
