"""Watch events as the API server sends them, through the cache's decoding: an ERROR event's
Status and a quota's object are decoded from the raw JSON the event carries."""

import json
from types import SimpleNamespace

import pytest
from kubernetes import client

from app.kube.api.cache import ClusterCache
from app.kube.api.errors import Gone, KubeError
from app.kube.api.freshness import Freshness
from app.kube.api.revocations import Revocations
from app.kube.api.watch_wire import EVENT
from app.kube.wire.reading import Unreadable, UnreadableLog, readers
from app.metrics.families import ClusterCollector


def watched(cache: ClusterCache) -> SimpleNamespace:
    """What the metrics read of a cluster, for a cache of its own."""
    return SimpleNamespace(
        store=cache.store,
        freshness=cache.freshness,
        watch_counters=cache.counters,
        revocations=Revocations(None, None),
    )


def cache_fed(*lines: bytes) -> ClusterCache:
    cache = ClusterCache(client.ApiClient(client.Configuration()))
    cache._events = lambda kind, rv: iter([EVENT.decode(line) for line in lines])
    cache._by_version = readers()  # no /version to ask: the newest rules
    return cache


def test_an_error_event_of_410_is_gone_and_others_are_errors():
    gone = (
        b'{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version: 5 (9)"}}'
    )
    with pytest.raises(Gone) as gone_info:
        cache_fed(gone)._watch_once("nodes", "5")
    assert "too old resource version" in gone_info.value.detail  # for the log, not a page
    other = b'{"type":"ERROR","object":{"kind":"Status","code":500,"message":"etcd is gone"}}'
    with pytest.raises(KubeError, match=r"The watch ended with an error \(500\)") as info:
        cache_fed(other)._watch_once("pods", "5")
    assert "etcd is gone" not in info.value.message and info.value.detail == "etcd is gone"


def test_a_quota_event_is_decoded_and_the_resource_version_follows():
    quota = (
        b'{"type":"ADDED","object":{"metadata":{"name":"q","namespace":"ns","resourceVersion":"12"},'
        b'"spec":{"hard":{"requests.example.com/dongle":"4"}},"status":{"hard":{"requests.example.com/dongle":"4"},'
        b'"used":{"requests.example.com/dongle":"1"}}}}'
    )
    cache = cache_fed(quota)
    assert cache._watch_once("quotas", "5") == "12"
    assert [q.key for q in cache.store.objects.quota_list()] == [("ns", "q")]


def pod_event(kind: str, name: str, rv: str, node_name: object = "n1") -> bytes:
    pod = {
        "metadata": {"name": name, "namespace": "d", "resourceVersion": rv},
        "spec": {"nodeName": node_name, "containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }
    return json.dumps({"type": kind, "object": pod}).encode()


def test_an_unreadable_pod_is_left_out_named_and_counted_and_the_watch_goes_on():
    cache = cache_fed(
        pod_event("ADDED", "a", "10"),
        pod_event("ADDED", "b", "11"),
        pod_event("MODIFIED", "b", "12", node_name=["not", "a", "name"]),  # b can no longer be read
        pod_event("ADDED", "c", "13"),
    )
    assert cache._watch_once("pods", "5") == "13"
    assert cache.store.objects.pod_keys() == [("d", "a"), ("d", "c")]  # b's earlier view is dropped
    [problem] = cache.unreadable.named()
    assert (problem.kind, problem.namespace, problem.name) == ("pods", "d", "b")
    assert "$.spec.nodeName" in problem.reason
    assert cache.freshness().unreadable_text == "1 pod could not be read"
    families = {
        m.name: m for m in ClusterCollector(lambda: watched(cache), cache.store.devices.answers).collect()
    }
    assert [(s.labels, s.value) for s in families["extres_decode_errors"].samples if s.value] == [
        ({"kind": "pods"}, 1)
    ]

    cache._events = lambda kind, rv: iter([EVENT.decode(pod_event("DELETED", "b", "14", node_name=1))])
    assert cache._watch_once("pods", "13") == "14"
    assert cache.unreadable.named() == [] and cache.freshness().unreadable_text == ""


def test_unreadable_objects_of_several_kinds_are_counted_in_one_sentence():
    log = UnreadableLog()
    for kind, name in (("pods", "a"), ("pods", "b"), ("nodes", "n")):
        log.failed(Unreadable(kind, "", name, "1", "Expected `str`"))
    fresh = Freshness(True, False, 0.0, None, tuple(sorted(log.counts().items())))
    assert fresh.unreadable_text == "1 node and 2 pods could not be read"


def test_the_servers_version_is_asked_again_at_a_relist_while_unknown(monkeypatch):
    from app.kube.api import cache as cache_module

    answers = iter([None, 35])
    monkeypatch.setattr(cache_module, "server_minor", lambda api, said=False: next(answers))
    cache = ClusterCache(client.ApiClient(client.Configuration()))
    cache._readers(relist=True)
    assert cache.server_minor is None  # not readable: the newest rules for now
    cache._readers()  # a watch event does not ask again
    assert cache.server_minor is None
    cache._readers(relist=True)
    assert cache.server_minor == 35


def end_bookmark(rv: str, annotated: bool = True) -> bytes:
    meta: dict = {"resourceVersion": rv}
    if annotated:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return json.dumps({"type": "BOOKMARK", "object": {"kind": "Pod", "metadata": meta}}).encode()


def test_a_streamed_list_is_swapped_in_at_its_end_bookmark_and_goes_on_as_the_watch():
    synced: list[str] = []
    cache = cache_fed(
        pod_event("ADDED", "a", "10"),
        pod_event("ADDED", "b", "11"),
        end_bookmark("15", annotated=False),  # an ordinary bookmark: the objects go on
        pod_event("ADDED", "c", "12"),
        end_bookmark("20"),
        pod_event("DELETED", "a", "21"),
        pod_event("ADDED", "d", "22"),
    )
    held = json.dumps(json.loads(pod_event("ADDED", "old", "1"))["object"]).encode()
    cache.store.put("pods", readers()["pods"].one(held)[0])  # from an earlier list
    cache.on_sync = synced.append
    assert cache._stream("pods") == "22"
    assert cache.store.objects.pod_keys() == [("d", "b"), ("d", "c"), ("d", "d")]  # the old list is gone
    assert synced == ["pods"] and cache.status["pods"].synced and cache.status["pods"].relists == 1


def test_a_stream_that_ends_before_its_objects_do_is_an_error_and_changes_nothing():
    cache = cache_fed(pod_event("ADDED", "a", "10"), pod_event("ADDED", "b", "11"))
    with pytest.raises(KubeError, match="ended the list's stream before every object arrived"):
        cache._stream("pods")
    assert cache.store.objects.pod_keys() == [] and not cache.status["pods"].synced
