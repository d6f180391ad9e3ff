"""Watch events as the API server sends them, through the cache's decoding: an ERROR event's
Status and a quota's object are decoded from the raw JSON the event carries."""

import pytest
from kubernetes import client

from app.kube.cache import EVENT, ClusterCache
from app.kube.errors import Gone, KubeError


def cache_fed(*lines: bytes) -> ClusterCache:
    cache = ClusterCache(client.ApiClient(client.Configuration()))
    cache._events = lambda kind, rv: iter([EVENT.decode(line) for line in lines])
    return cache


def test_an_error_event_of_410_is_gone_and_others_are_errors():
    gone = (
        b'{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version: 5 (9)"}}'
    )
    with pytest.raises(Gone, match="too old resource version"):
        cache_fed(gone)._watch_once("nodes", "5")
    other = b'{"type":"ERROR","object":{"kind":"Status","code":500,"message":"etcd is gone"}}'
    with pytest.raises(KubeError, match="watch error 500: etcd is gone"):
        cache_fed(other)._watch_once("pods", "5")


def test_a_quota_event_is_decoded_and_the_resource_version_follows():
    quota = (
        b'{"type":"ADDED","object":{"metadata":{"name":"q","namespace":"ns","resourceVersion":"12"},'
        b'"spec":{"hard":{"requests.example.com/dongle":"4"}},"status":{"hard":{"requests.example.com/dongle":"4"},'
        b'"used":{"requests.example.com/dongle":"1"}}}}'
    )
    cache = cache_fed(quota)
    assert cache._watch_once("quotas", "5") == "12"
    assert [q.key for q in cache.quota_list()] == [("ns", "q")]
