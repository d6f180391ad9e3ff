"""Every answer read from an API server is bounded after decompression (a member's server may send
gzip unasked: 0.7 MB of it was 780 MiB): a list page past ``PAGE_MOST`` and a watch event's line
past ``LINE_MOST`` are refused, naming the limit, with no more held than the bound."""

from __future__ import annotations

import gzip
import io
import tracemalloc

import pytest
from urllib3.response import HTTPResponse

from app.kube.api import listing
from app.kube.api.errors import TooLong, Unavailable, translate
from app.kube.api.raw import body


def gzip_bomb(mib: int) -> HTTPResponse:
    packer = gzip.GzipFile(fileobj=(packed_io := io.BytesIO()), mode="wb", compresslevel=9)
    zeros = b"\0" * (1 << 20)
    for _ in range(mib):
        packer.write(zeros)
    packer.close()
    packed = packed_io.getvalue()
    return HTTPResponse(
        io.BytesIO(packed), headers={"Content-Encoding": "gzip"}, status=200, preload_content=False
    )


def test_a_gzip_bomb_is_read_up_to_the_bound_and_refused_naming_it():
    bomb = gzip_bomb(256)  # 256 MiB inflated, 250 KiB on the wire
    tracemalloc.start()
    try:
        with pytest.raises(TooLong) as refused:
            body(bomb, most=8 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20  # the bound and a piece, never the 256 MiB
    err = translate(refused.value)
    assert isinstance(err, Unavailable) and err.message == (
        "Refused: answer too large (an answer over 8 MiB, the most read of one)."
    )


def test_a_watch_line_that_never_ends_is_refused(monkeypatch):
    class Endless:
        def stream(self, amt=None, decode_content=False):
            while True:
                yield b"x" * (1 << 20)

        def release_conn(self):
            pass

    monkeypatch.setattr(listing, "LINE_MOST", 4 << 20)
    requests = listing.Requests.__new__(listing.Requests)
    requests.open, requests.watch_timeout = {}, 1
    monkeypatch.setattr(requests, "get", lambda *a, **k: Endless(), raising=False)
    monkeypatch.setattr(requests, "selection", lambda kind: {}, raising=False)
    with pytest.raises(TooLong, match="a watch event over 4 MiB"):
        list(requests.lines("pods", "1", lambda: None))
