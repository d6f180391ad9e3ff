"""Pods with claim volumes (a StatefulSet's persistentVolumeClaim, a generic ephemeral volume,
a projected token) on the real API server: the cache syncs with them already there, and follows
one added after it started; the numbers count them."""

from __future__ import annotations

import pytest
from kubernetes import client

from app.kube.api.cache import ClusterCache
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod

pytestmark = pytest.mark.kube

VOLUMES = [
    {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0", "readOnly": False}},
    {
        "name": "scratch",
        "ephemeral": {
            "volumeClaimTemplate": {
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }
        },
    },
    {
        "name": "token",
        "projected": {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}}]},
    },
]

SPEC = {"volumes": VOLUMES, "serviceAccountName": "default"}


def test_the_cache_syncs_with_claim_pods_present_and_follows_one_added_later(admin_api, core, uid):
    namespace = f"{uid}-claims"
    core.create_namespace({"metadata": {"name": namespace}})
    node = f"{uid}-n"
    create_node(core, node, {"example.com/dongle": "4"})
    for name in ("db-0", "db-1"):
        create_pod(core, name, node, {"example.com/dongle": "1"}, namespace, **SPEC)

    cache = ClusterCache(admin_api, page_size=50)
    cache.start()
    try:
        assert cache.wait_synced(30), cache.freshness()
        assert {("db-0", namespace), ("db-1", namespace)} <= {
            (n, ns) for ns, n in cache.store.objects.pod_keys()
        }
        assert cache.store.objects.requested_on(node).get("example.com/dongle") == 2
        assert cache.unreadable.counts() == {}

        create_pod(core, "db-2", node, {"example.com/dongle": "1"}, namespace, **SPEC)
        eventually(lambda: cache.store.objects.requested_on(node).get("example.com/dongle") == 3)
        fresh = cache.freshness()
        assert (fresh.stale, fresh.unreadable) == (False, ())
        assert cache.status["pods"].relists == 1  # followed by the watch, never relisted
    finally:
        cache.stop()
        client.CoreV1Api(admin_api).delete_namespace(namespace)
