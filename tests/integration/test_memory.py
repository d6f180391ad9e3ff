"""The memory shape of a cold sync, with real-sized pods on the real kube-apiserver.

A guard, not a benchmark (bench/cache_bench.py measures): the cache projects each
listed page as it arrives, so the peak of traced allocation during a sync is a
page's worth plus what the cache keeps, not every page's raw dicts at once.
"""

from __future__ import annotations

import gc
import logging
import re
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from kubernetes import client

from app.kube.api.cache import ClusterCache
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.web.process import of as process_of
from bench.profiles import RealProfile, listed_size
from extres_demo import testenv

pytestmark = pytest.mark.kube

PODS = 2000
PAGE = 100
# Keeping every page until the last one arrives costs ~40 KB per pod here; projecting each page
# as it arrives costs a page (~100 pods x 40 KB) plus ~0.6 KB kept per pod.
PEAK_PER_POD = 8 * 1024
KEPT_PER_POD = 1536


@pytest.fixture(scope="module")
def control_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[testenv.ControlPlane]:
    """A control plane of its own, bare (no controllers, no kwok): the profile's pods carry
    hand-made owner references and sit on nodes that do not exist, which the ReplicaSet, Job and
    pod garbage collectors would act on."""
    plane = testenv.start(tmp_path_factory.mktemp("memory"), bare=True)
    yield plane
    plane.stop()


@pytest.fixture(scope="module")
def admin_api(control_plane: testenv.ControlPlane) -> Iterator[client.ApiClient]:
    api = api_client(load_configuration(ClusterConfig("false", str(control_plane.kubeconfig))))
    yield api
    api.close()


@pytest.fixture(scope="module")
def real_pods(admin_api: client.ApiClient) -> str:
    core = client.CoreV1Api(admin_api)
    namespace = "memory-real-pods"
    core.create_namespace({"metadata": {"name": namespace}})
    profile = RealProfile(admin_api, namespace)
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(lambda j: profile.create(j, f"memory-node-{j % 20}", "example.com/dongle"), range(PODS))
        )
    return namespace


def test_real_profile_pods_are_real_sized(admin_api, real_pods):
    size = listed_size(admin_api, real_pods)
    assert 8 * 1024 <= size <= 12 * 1024, f"{size:.0f} bytes of JSON per listed pod"
    pod = client.CoreV1Api(admin_api).list_namespaced_pod(real_pods, limit=1).items[0]
    assert pod.metadata.owner_references[0].kind in ("ReplicaSet", "StatefulSet", "Job")
    assert pod.metadata.managed_fields, "the API server records who wrote what"
    assert len(pod.spec.containers[0].env) >= 20


def test_the_app_logs_its_cache_size_after_each_sync(make_app, real_pods, caplog):
    with caplog.at_level(logging.INFO, logger="app.kube.api.cluster"):
        app = make_app()
        with app.app_context():
            assert process_of(app).local.cluster.cache.wait_synced(60)
    line = next(r.message for r in caplog.records if r.message.startswith("cache synced pods"))
    assert re.search(r"holds \d+ nodes, \d+ pods, \d+ quotas, ~[\d.]+ MiB", line), line


def test_cold_sync_keeps_no_page_beyond_its_projection(admin_api, real_pods):
    cache = ClusterCache(admin_api, page_size=PAGE, freeze_gc=False)
    gc.collect()
    tracemalloc.start()
    try:
        cache._list("pods")
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    pods = sum(1 for ns, _ in cache.store.objects.pod_keys() if ns == real_pods)
    assert pods == PODS
    listed = cache.store.objects.pod_count()
    assert peak / listed < PEAK_PER_POD, f"peak {peak / listed:.0f} B per pod"
    assert kept / listed < KEPT_PER_POD, f"kept {kept / listed:.0f} B per pod"
    assert cache.store.objects.size().pods == listed
