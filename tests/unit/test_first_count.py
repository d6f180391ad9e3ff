"""The first list of pods, counted in as it arrives: pages show what nodes offer at once and
requested as it rises (marked as still counting), while a relist is still built off to the side
and swapped in whole. No API server: the pages are made here and handed to the cache's own
``take``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.kube.api.cache import ClusterCache
from app.kube.api.listing import Listed
from app.kube.state.store import Store
from app.kube.wire.reading import readers
from tests.builders import node, pod

D = "example.com/dongle"


def _page(*pods: dict[str, Any], rv: str = "9") -> bytes:
    return json.dumps({"metadata": {"resourceVersion": rv}, "items": list(pods)}).encode()


def _requested(store: Store, name: str = "a") -> int:
    row = store.overview_row(name)
    assert row is not None
    return row.usage[D].requested


def _listing(cache: ClusterCache, pages: list[bytes], seen: Callable[[ClusterCache], None]) -> None:
    """The cache's lists are ``pages`` from now on; ``seen`` looks at it before each page after
    the first."""

    def fetch(kind: str, take: Callable[[bytes], object]) -> str:
        for i, data in enumerate(pages):
            if i:
                seen(cache)
            take(data)
        return "9"

    cache.requests.pages = fetch  # type: ignore[method-assign]


def test_the_first_list_of_pods_is_counted_in_page_by_page_and_a_relist_is_swapped_in_whole():
    pages = [_page(pod("p1", "a", {D: 1})), _page(pod("p2", "a", {D: 1}), pod("p3", "a", {D: 1}))]
    during: list[tuple[int, int | None, int]] = []

    def seen(cache: ClusterCache) -> None:
        store = cache.store
        during.append((store.objects.pod_count(), cache.counting(), _requested(store)))

    cache = ClusterCache(None, freeze_gc=False)  # type: ignore[arg-type]
    cache._by_version = readers()
    _listing(cache, pages, seen)
    cache.store.apply_node(node("a", {D: 4}))
    cache.status.listed("nodes")
    cache.dra = "absent"
    cache._sync("pods")
    assert during == [(1, 1, 1)]  # the second page not yet taken: one pod counted, shown
    assert cache.counting() is None and cache.status["pods"].synced
    assert _requested(cache.store) == 3
    assert cache.store.node_facts()[0].free(D) == 1  # the fit model over the whole list

    # a relist: what was complete stays shown until the new list is whole
    _listing(cache, [_page(pod("p1", "a", {D: 1})), _page()], seen)
    during.clear()
    cache._sync("pods")
    assert during == [(3, None, 3)]
    assert _requested(cache.store) == 1


def test_counting_is_said_only_once_what_nodes_offer_is_known():
    cache = ClusterCache(None, freeze_gc=False)  # type: ignore[arg-type]
    cache.store.count_pods([])
    assert cache.counting() is None  # nodes not listed yet: nothing is known
    cache.status.listed("nodes")
    assert cache.counting() is None  # whether DRA devices are served is not known yet
    cache.dra = "served"
    cache.status.add("resourceslices")
    assert cache.counting() is None  # DRA devices not listed yet
    cache.status.listed("resourceslices")
    assert cache.counting() == 0
    fresh = cache.freshness()
    assert fresh.counting == 0 and not fresh.synced
    cache.status.listed("pods")
    assert cache.counting() is None


def test_a_first_list_begun_again_drops_what_the_broken_one_brought():
    store = Store()
    store.apply_node(node("a", {D: 4}))
    store.start_counting()
    store.count_pods([_view(pod("gone", "a", {D: 1}))])
    assert _requested(store) == 1
    store.start_counting()  # the list broke off: it begins again, and "gone" was deleted meanwhile
    store.count_pods([_view(pod("p", "a", {D: 2}))])
    store.counted()
    assert store.objects.pod_count() == 1 and _requested(store) == 2


def test_a_streamed_first_list_goes_in_batches_and_the_rest_when_it_ends(monkeypatch):
    monkeypatch.setattr(Listed, "BATCH", 2)
    batches: list[list[str]] = []
    listed = Listed("pods", into=lambda views: batches.append([v.name for v in views]))
    for name in ("p1", "p2", "p3"):
        listed.take([_view(pod(name, "a"))], [])
    assert batches == [["p1", "p2"]]
    assert listed.whole is None and batches == [["p1", "p2"], ["p3"]]


def _view(obj: dict[str, Any]) -> Any:
    view, _, problem = readers()["pods"].one(json.dumps(obj).encode())
    assert problem is None
    return view
