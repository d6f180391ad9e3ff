"""The cache's lists, streamed where the API server offers it (a watch's initial events, KEP-3157)
and in pages where it does not: the same objects either way, the stream going on as the watch,
and a 410 inside a stream leading to a streamed relist."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from app.kube.api.cache import ClusterCache
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.kube.api.listing import initial_events_end
from app.kube.api.watch_wire import EVENT
from extres_demo import testenv
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod

pytestmark = pytest.mark.kube
# a resource of this file alone: no pending pod of another test is scheduled onto these nodes
D = "streamed.example.com/dongle"


def recorded(cache: ClusterCache) -> list[tuple[str, dict[str, Any]]]:
    """Every list or watch request the cache makes: (kind, its query as sent)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    real = cache.requests.get

    def get(kind: str, query: dict[str, Any], timeout: tuple[float, float]) -> Any:
        calls.append((kind, dict(query)))
        return real(kind, query, timeout)

    cache.requests.get = get  # type: ignore[method-assign]
    return calls


def requested(cache: ClusterCache, node: str) -> int:
    return cache.store.objects.requested_on(node).get(D, 0)


def test_the_cache_streams_its_lists_and_the_stream_goes_on_as_the_watch(control_plane, core, uid):
    node = f"{uid}-n"
    create_node(core, node, {D: "8"})
    for i in range(3):
        create_pod(core, f"{uid}-p{i}", node, {D: "1"})
    api = api_client(load_configuration(ClusterConfig("false", str(control_plane.kubeconfig))))
    cache = ClusterCache(api, watch_timeout=60)
    calls = recorded(cache)
    cache.start()
    try:
        assert cache.wait_synced(30)
        assert requested(cache, node) == 3
        pods = [kwargs for kind, kwargs in calls if kind == "pods"]
        assert len(pods) == 1 and pods[0]["sendInitialEvents"] is True and "limit" not in pods[0]
        assert cache.streaming and cache.status["pods"].relists == 1
        # a change after the sync arrives on the same stream: no other request
        create_pod(core, f"{uid}-after", node, {D: "2"})
        eventually(lambda: requested(cache, node) == 5)
        assert len([kind for kind, _ in calls if kind == "pods"]) == 1
    finally:
        cache.stop()
        api.close()


def test_a_410_inside_a_stream_leads_to_a_streamed_relist(control_plane, core, uid):
    """The API server ends a watch from a compacted version with an ERROR event of code 410; its
    watch cache will not produce one on demand, so the first pod stream is cut right after its
    objects with exactly that event. The streams before and after are real."""
    node = f"{uid}-n"
    create_node(core, node, {D: "8"})
    create_pod(core, f"{uid}-p", node, {D: "1"})
    api = api_client(load_configuration(ClusterConfig("false", str(control_plane.kubeconfig))))
    cache = ClusterCache(api, watch_timeout=60)
    calls = recorded(cache)
    real_events = cache._events
    cut: list[bool] = []

    def events(kind: str, rv: str | None) -> Iterator[Any]:
        for event in real_events(kind, rv):
            yield event
            if kind == "pods" and not cut and event.type == "BOOKMARK" and initial_events_end(event.object):
                cut.append(True)
                status = b'{"kind": "Status", "code": 410, "message": "too old resource version"}'
                yield EVENT.decode(b'{"type": "ERROR", "object": ' + status + b"}")
                return

    cache._events = events  # type: ignore[method-assign]
    cache.start()
    try:
        eventually(lambda: cache.status["pods"].relists >= 2, timeout=30)
        pods = [kwargs for kind, kwargs in calls if kind == "pods"]
        assert [p.get("sendInitialEvents") for p in pods[:2]] == [True, True]
        create_pod(core, f"{uid}-after", node, {D: "2"})
        eventually(lambda: requested(cache, node) == 3)
    finally:
        cache.stop()
        api.close()


@pytest.fixture(scope="module")
def unstreaming(tmp_path_factory: pytest.TempPathFactory) -> Iterator[testenv.ControlPlane]:
    """etcd and a kube-apiserver with its WatchList feature gate off: it refuses streamed lists."""
    plane = testenv.start(tmp_path_factory.mktemp("unstreaming") / "kube", bare=True, watch_list=False)
    yield plane
    plane.stop()


def test_a_server_that_does_not_stream_is_listed_in_pages(unstreaming, uid):
    api = api_client(load_configuration(ClusterConfig("false", str(unstreaming.kubeconfig))))
    core = client.CoreV1Api(api)
    node = f"{uid}-n"
    create_node(core, node, {D: "8"})
    for i in range(3):
        create_pod(core, f"{uid}-p{i}", node, {D: "1"})
    cache = ClusterCache(api, page_size=2, watch_timeout=60)
    calls = recorded(cache)
    cache.start()
    try:
        assert cache.wait_synced(30)
        assert requested(cache, node) == 3
        assert not cache.streaming  # refused once: every later list is in pages
        asked = [kind for kind, kwargs in calls if kwargs.get("sendInitialEvents")]
        assert asked and len(asked) == len(set(asked))  # asked (kinds list at once), refused, not again
        pages = [kwargs["limit"] for kind, kwargs in calls if kind == "pods" and "limit" in kwargs]
        assert pages == [2, 2]  # 3 pods in pages of 2
        assert not cache.freshness().stale and cache.status["pods"].restarts == 0
        create_pod(core, f"{uid}-after", node, {D: "2"})
        eventually(lambda: requested(cache, node) == 5)
    finally:
        cache.stop()
        api.close()
