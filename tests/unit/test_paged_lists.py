"""Lists in pages, the next page fetched while the last is taken: order, the version, one page
ahead at most, and a failure on either side ending the list (no API server: ``get`` is replaced
by pages made here)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.kube.api.listing import Requests
from app.kube.api.raw import body


class _Body:
    """A response whose body arrives in pieces of at most 7 bytes, as a chunked one does."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.released = False
        self.headers: dict[str, str] = {}  # not compressed

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        for at in range(0, len(self.data), 7):
            yield self.data[at : at + 7]

    def release_conn(self) -> None:
        self.released = True


def _page(n: int, last: int) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": "77"}
    if n < last:
        meta["continue"] = f"after-{n}"
    return json.dumps({"metadata": meta, "items": [{"n": n}]}).encode()


def _requests(last: int, fail_at: int | None = None) -> tuple[Requests, list[dict[str, Any]]]:
    asked: list[dict[str, Any]] = []
    requests = Requests(None, page_size=1, watch_timeout=60, live_pods_only=True)  # type: ignore[arg-type]

    def get(kind: str, query: dict[str, Any], timeout: tuple[float, float]) -> _Body:
        asked.append(dict(query))
        n = int(query["continue"].split("-")[1]) + 1 if "continue" in query else 0
        if n == fail_at:
            raise ConnectionError(f"page {n} lost")
        return _Body(_page(n, last))

    requests.get = get  # type: ignore[method-assign]
    return requests, asked


def _n(data: bytes) -> int:
    return int(json.loads(data)["items"][0]["n"])


def test_pages_arrive_in_order_with_each_continue_token_and_the_list_version():
    requests, asked = _requests(last=4)
    taken: list[int] = []
    assert requests.pages("pods", lambda data: taken.append(_n(data))) == "77"
    assert taken == [0, 1, 2, 3, 4]
    assert [q.get("continue") for q in asked] == [None, "after-0", "after-1", "after-2", "after-3"]
    assert all(q["limit"] == 1 and q["fieldSelector"].startswith("status.phase!=") for q in asked)


def test_the_next_page_is_fetched_while_one_is_taken_and_never_more_than_one_ahead():
    requests, asked = _requests(last=9)
    fetched_while_taking: list[int] = []

    def take(data: bytes) -> None:
        time.sleep(0.05)  # a slow decode: the fetcher runs ahead as far as it may
        fetched_while_taking.append(len(asked) - (_n(data) + 1))

    requests.pages("pods", take)
    assert max(fetched_while_taking) >= 1  # page n+1 was asked for before page n was done
    assert max(fetched_while_taking) <= 2  # one waiting, one arriving: no more


def test_a_failed_page_ends_the_list_with_its_error():
    requests, _ = _requests(last=5, fail_at=3)
    taken: list[int] = []
    with pytest.raises(ConnectionError, match="page 3 lost"):
        requests.pages("pods", lambda data: taken.append(_n(data)))
    assert taken == [0, 1, 2]


def test_a_failure_taking_a_page_stops_the_fetching():
    requests, asked = _requests(last=50)

    def take(data: bytes) -> None:
        raise ValueError("cannot take")

    with pytest.raises(ValueError, match="cannot take"):
        requests.pages("pods", take)
    deadline = time.monotonic() + 5
    while any(t.name == "extres-pages-pods" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the fetcher did not end"
        time.sleep(0.05)
    assert len(asked) <= 3  # it gave up: not every page was fetched


def test_a_body_arriving_in_pieces_is_read_whole_and_its_connection_released():
    answer = _Body(_page(3, 5))
    assert body(answer) == _page(3, 5)
    assert answer.released
