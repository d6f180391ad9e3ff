"""Benchmark the shared cache and the pages against a real kube-apiserver.

    python bench/cache_bench.py            # 5,000 nodes, 150,000 pods (30 per node)
    python bench/cache_bench.py --quick    # 300 nodes, 9,000 pods

It starts its own control plane (scripts/kube-testenv), seeds it, and prints
ratios measured in the same run:
  cold start: synced cache vs. naive list + model objects vs. raw json.loads (the floor)
  warm: p50/p95 of the overview and its grid fragment (memoised; after a pod event before
        every view; and, as the baseline, with every node's row rebuilt before every view),
        a node page, the pending page (unschedulable pods seeded with the scheduler's
        condition; memoised diagnoses, and after a pod event)
  memory: RSS growth of the synced cache per pod, vs. the raw list JSON per pod
  API load: API requests per page view
  events: time to apply a pod event on the big cache vs. on a 1-pod cache (O(1) means ~1x)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes import client

from app import create_app, testenv
from app.kube.cache import ClusterCache
from app.kube.client import ClusterConfig, api_client, load_configuration

RESOURCES = ("example.com/dongle", "acme.io/fpga", "nvidia.com/gpu")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def seed(api: client.ApiClient, nodes: int, per_node: int) -> None:
    core = client.CoreV1Api(api)

    def node(i: int) -> None:
        cap = {"cpu": "64", "memory": "256Gi", "pods": "110", **{r: "8" for r in RESOURCES}}
        core.create_node(
            {
                "metadata": {"name": f"n{i:05d}", "labels": {"zone": f"z{i % 3}"}},
                "status": {"capacity": cap, "allocatable": cap},
            },
            _preload_content=False,
        )

    def pod(j: int) -> None:
        n = j // per_node
        core.create_namespaced_pod(
            "default",
            {
                "metadata": {"name": f"p{j:06d}", "labels": {"app": f"a{j % 50}"}},
                "spec": {
                    "nodeName": f"n{n:05d}",
                    "containers": [
                        {
                            "name": "c",
                            "image": "registry.example/i:1",
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "64Mi", RESOURCES[j % 3]: "1"},
                                "limits": {RESOURCES[j % 3]: "1"},
                            },
                        }
                    ],
                },
            },
            _preload_content=False,
        )

    def pending(j: int) -> None:
        """A pod no node can take, with the condition kube-scheduler would write (none runs here)."""
        name, resource = f"pending-{j:05d}", RESOURCES[j % 2]
        spec: dict = {
            "containers": [
                {"name": "c", "image": "registry.example/i:1", "resources": {"limits": {resource: "9"}}}
            ]
        }
        if j % 3 == 0:
            spec["nodeSelector"] = {"zone": "z0"}
        core.create_namespaced_pod(
            "default", {"metadata": {"name": name}, "spec": spec}, _preload_content=False
        )
        message = f"0/{nodes} nodes are available: {nodes} Insufficient {resource}."
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
        core.patch_namespaced_pod_status(
            name, "default", {"status": {"conditions": [condition]}}, _preload_content=False
        )

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(node, range(nodes)))
        t = time.perf_counter()
        list(pool.map(pod, range(nodes * per_node)))
        list(pool.map(pending, range(max(10, nodes // 50))))
        print(
            f"seeded {nodes} nodes, {nodes * per_node} pods and {max(10, nodes // 50)} unschedulable pods "
            f"({time.perf_counter() - t:.0f}s for pods)"
        )


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()
    nodes = args.nodes or (300 if args.quick else 5000)
    pods = nodes * args.pods_per_node
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"kube-apiserver v1.20.2 on loopback"
    )
    plane = testenv.start(Path(tempfile.mkdtemp(prefix="extres-bench-")))
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        seed(api, nodes, args.pods_per_node)
        core = client.CoreV1Api(api)

        # ---- cold start -------------------------------------------------------
        def raw_floor() -> int:
            json.loads(core.list_node(_preload_content=False).data)
            data = core.list_pod_for_all_namespaces(_preload_content=False).data
            json.loads(data)
            return len(data)

        floor, raw_pod_bytes = timed(raw_floor)
        naive, _ = timed(lambda: (core.list_node(), core.list_pod_for_all_namespaces()))
        gc.collect()
        before = rss()
        cache = ClusterCache(api)
        t = time.perf_counter()
        cache.start()
        assert cache.wait_synced(600)
        ours = time.perf_counter() - t
        gc.collect()
        grown = rss() - before
        # retained: what the synced cache holds once the list's transient JSON is freed
        tracemalloc.start()
        again = ClusterCache(api)
        again._list("pods")
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del again
        print(
            f"cold start: floor (raw GET + json.loads) {floor:.2f}s, naive (models) {naive:.2f}s "
            f"= {naive / floor:.2f}x, cache sync {ours:.2f}s = {ours / floor:.2f}x the floor"
        )
        ratio = retained / raw_pod_bytes
        print(
            f"memory: pods cache retains {retained / pods:.0f} bytes per pod "
            f"(raw list JSON: {raw_pod_bytes / pods:.0f} bytes per pod; ratio {ratio:.2f}); "
            f"RSS grew {grown / 2**20:.1f} MiB during the sync = {grown / pods:.0f} bytes per pod, "
            "transient parse buffers included"
        )

        # ---- events in O(1) -------------------------------------------------------
        sample = {
            "metadata": {"name": "p000001", "namespace": "default", "resourceVersion": "1"},
            "spec": {
                "nodeName": "n00000",
                "containers": [{"name": "c", "resources": {"requests": {"example.com/dongle": "1"}}}],
            },
            "status": {"phase": "Running"},
        }
        small = ClusterCache(api)
        small.apply_pod(sample)

        def apply_many(c: ClusterCache) -> float:
            t0 = time.perf_counter()
            for _ in range(5000):
                c.apply_pod(sample)
            return (time.perf_counter() - t0) / 5000

        big_t, small_t = apply_many(cache), apply_many(small)
        print(
            f"events: {big_t * 1e6:.1f} us per pod event on the big cache vs {small_t * 1e6:.1f} us "
            f"on a 1-pod cache = {big_t / small_t:.2f}x"
        )
        cache.stop()

        # ---- warm pages -------------------------------------------------------------
        app = create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false", "cookie_secure": False})
        web = app.test_client()
        web.get("/")
        state = app.extensions["extres"]
        assert state.cluster.cache.wait_synced(600)
        rest = state.cluster.api.rest_client
        calls: list[str] = []
        original = rest.request
        rest.request = lambda m, u, *a, **k: (calls.append(m), original(m, u, *a, **k))[1]
        cache = state.cluster.cache
        churn = iter(range(10**9))

        def pod_event() -> None:
            """A pod requesting a dongle is bound somewhere: one node's row changes, as in a live cluster."""
            k = next(churn)
            cache.apply_pod(
                {
                    "metadata": {"name": f"churn-{k}", "namespace": "default", "resourceVersion": "1"},
                    "spec": {
                        "nodeName": f"n{k * 7 % nodes:05d}",
                        "containers": [{"name": "c", "resources": {"requests": {RESOURCES[0]: "1"}}}],
                    },
                    "status": {"phase": "Running"},
                }
            )

        def rebuild_all() -> None:
            """The baseline: every row rebuilt before the view (what a view cost before rows were kept)."""
            pod_event()
            with cache._lock:
                cache._dirty.update(cache.nodes)

        fragment = {"HX-Request": "true", "HX-Target": "grid"}
        pages = {
            "overview": ("/", {}, None),
            "overview, changed": ("/", {}, pod_event),
            "overview, rebuilt": ("/", {}, rebuild_all),
            "fragment": ("/?q=n0", fragment, None),
            "fragment, changed": ("/?q=n0", fragment, pod_event),
            "fragment, rebuilt": ("/?q=n0", fragment, rebuild_all),
            "node page": ("/nodes/n00001", {}, None),
            "pending page": ("/pending/", {}, None),
            "pending, changed": ("/pending/", {}, pod_event),
        }
        views = 0
        p50s: dict[str, float] = {}
        for label, (path, headers, before_each) in pages.items():
            times = []
            for _ in range(args.requests):
                if before_each is not None:
                    before_each()
                t0 = time.perf_counter()
                resp = web.get(path, headers=headers)
                times.append(time.perf_counter() - t0)
                assert resp.status_code == 200, (path, resp.status_code)
                views += 1
            q = statistics.quantiles(times, n=20)
            p50s[label] = statistics.median(times)
            print(f"warm {label:18s} p50 {p50s[label] * 1000:7.1f} ms  p95 {q[18] * 1000:7.1f} ms")
        for label in ("overview", "fragment"):
            print(
                f"{label} after an event: {p50s[label + ', changed'] / p50s[label + ', rebuilt']:.2f}x "
                "the time with every row rebuilt (p50)"
            )
        gets = sum(1 for m in calls if m == "GET")
        print(
            f"API load: {len(calls)} API requests ({gets} GET/list) over {views} page views "
            f"= {len(calls) / views:.3f} per view"
        )
        state.close()
    finally:
        plane.stop()


if __name__ == "__main__":
    main()
