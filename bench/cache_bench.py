"""Benchmark the shared cache and the pages against a real kube-apiserver, with real-sized pods.

    python bench/cache_bench.py                 # 5,000 nodes; real and tiny pods, 10,000 then 50,000
    python bench/cache_bench.py --quick         # 300 nodes; 2,000 then 6,000 pods
    python bench/cache_bench.py --profiles real --steps 10000,50000,150000

For each pod profile (bench/profiles.py: ``real`` pods of 8-12 KB JSON as listed, made the way
ReplicaSets, StatefulSets and Jobs make them; ``tiny`` pods of ~1.7 KB) it starts its own control
plane, seeds the nodes, and at each step of pod counts measures, each in a fresh process
(bench/sync_probe.py, so memory figures start from a clean heap):
  cold sync vs. the raw-parse floor (the same pages fetched and json.loads'ed);
  peak RSS growth during the sync and RSS after it, per pod, vs. what the cache retains
  (tracemalloc); the growth of each per-pod figure from the first step to the last.
At the last step, in this process: pod events on the big cache vs. a 1-pod cache, and the p50/p95
of every page and fragment, memoised and right after a pod event (plus, as the baseline, after
every node's row was rebuilt), and API calls per page view.
One pod in ten of the Jobs' pods has Succeeded: the cache lists only non-terminated pods (a field
selector); the bench also syncs without it, to show what it saves.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app import create_app  # noqa: E402
from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from app.kube.state.store import Store  # noqa: E402
from app.web.process import of as process_of  # noqa: E402
from bench.profiles import PROFILES, RealProfile, listed_size  # noqa: E402
from extres_demo import testenv  # noqa: E402

RESOURCES = ("example.com/dongle", "acme.io/fpga", "nvidia.com/gpu")
KB = 1024


def seed_nodes(core: client.CoreV1Api, nodes: int, extended: dict[str, str] | None = None) -> None:
    """Nodes n00000.. labelled zone=z0..z2, with ``extended`` (default: 64 of each RESOURCES)."""
    extended = extended if extended is not None else {r: "64" for r in RESOURCES}

    def node(i: int) -> None:
        cap = {"cpu": "64", "memory": "256Gi", "pods": "110", **extended}
        core.create_node(
            {
                "metadata": {"name": f"n{i:05d}", "labels": {"zone": f"z{i % 3}"}},
                "status": {"capacity": cap, "allocatable": cap},
            },
            _preload_content=False,
        )

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(node, range(nodes)))


def seed_pods(profile: Any, nodes: int, start: int, stop: int) -> float:
    """Pods start..stop-1, spread over the nodes; every tenth Job pod has Succeeded. Returns seconds."""
    core = profile.core

    def pod(j: int) -> None:
        node = f"n{j % nodes:05d}"
        profile.create(j, node, RESOURCES[j % 3])
        # app 2 is a Job: one of its pods in ten has finished
        if isinstance(profile, RealProfile) and j % 30 == 2 and (j // 30) % 10 == 0:
            name = profile.body(j, node, RESOURCES[j % 3])["metadata"]["name"]
            core.patch_namespaced_pod_status(
                name, profile.namespace, {"status": {"phase": "Succeeded"}}, _preload_content=False
            )

    t = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(pod, range(start, stop)))
    return time.perf_counter() - t


def seed_pending(core: client.CoreV1Api, nodes: int, count: int, condition: bool = True) -> None:
    """Pods no node can take, with the condition kube-scheduler would write when none runs
    (``condition``: else the scheduler running writes its own)."""

    def pending(j: int) -> None:
        name, resource = f"pending-{j:05d}", RESOURCES[j % 2]
        spec: dict = {
            "containers": [
                {"name": "c", "image": "registry.example/i:1", "resources": {"limits": {resource: "99"}}}
            ]
        }
        if j % 3 == 0:
            spec["nodeSelector"] = {"zone": "z0"}
        core.create_namespaced_pod(
            "default", {"metadata": {"name": name}, "spec": spec}, _preload_content=False
        )
        if not condition:
            return
        message = f"0/{nodes} nodes are available: {nodes} Insufficient {resource}."
        written = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
        core.patch_namespaced_pod_status(
            name, "default", {"status": {"conditions": [written]}}, _preload_content=False
        )

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(pending, range(count)))


def probe(kubeconfig: Path, mode: str, *extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "sync_probe.py"), str(kubeconfig), mode, *extra],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"sync_probe.py {mode} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    out = done.stdout
    return json.loads(out.strip().splitlines()[-1])


def measure_sync(kubeconfig: Path, pods: int) -> dict[str, float]:
    """Cold-sync figures at one step, each from fresh processes (best of two for times)."""
    floors = [probe(kubeconfig, "floor") for _ in range(2)]
    floor = min(r["seconds"] for r in floors)
    wires = [probe(kubeconfig, "wire") for _ in range(2)]
    decodes = [probe(kubeconfig, "decode") for _ in range(2)]
    syncs = [probe(kubeconfig, "sync") for _ in range(2)]
    sync = min(syncs, key=lambda r: r["seconds"])
    trace = probe(kubeconfig, "trace")
    everything = probe(kubeconfig, "sync", "--all-pods")
    listed = sync["pods"]
    return {
        "pods": listed,
        "floor": floor,
        "wire": min(r["seconds"] for r in wires),
        "decode": min(r["seconds"] for r in decodes),
        "sync": sync["seconds"],
        "peak_per_pod": max(r["peak"] for r in syncs) / listed,
        "after": sync["after"],
        "retained": trace["retained"],
        "retained_per_pod": trace["retained"] / listed,
        "traced_peak_per_pod": trace["traced_peak"] / listed,
        "estimated": sync["estimated"],
        "all_pods": everything["pods"],
        "all_sync": everything["seconds"],
        "all_after": everything["after"],
        "seeded": pods,
        # lists begun again after a 410 (a continue token outlived etcd's history)
        "restarts": sum(r.get("restarts", 0) for r in (*floors, *wires, *decodes, *syncs, trace, everything)),
    }


def print_sync(label: str, m: dict[str, float]) -> None:
    mib = 2**20
    print(
        f"[{label}] {m['pods']:.0f} live pods listed (of {m['all_pods']:.0f}): cold sync {m['sync']:.2f}s "
        f"= {m['sync'] / m['wire']:.2f}x the wire floor (the same requests, bodies read and skipped: "
        f"{m['wire']:.2f}s), {m['sync'] / m['decode']:.2f}x the decode floor (the cache's decoder, "
        f"nothing kept: {m['decode']:.2f}s); json.loads of every page {m['floor']:.2f}s "
        f"({m['floor'] / m['sync']:.2f}x the sync)"
    )
    print(
        f"[{label}]   peak RSS growth {m['peak_per_pod'] / KB:.2f} KB per pod; RSS after sync "
        f"{m['after'] / mib:.1f} MiB vs. retained {m['retained'] / mib:.1f} MiB "
        f"({m['retained_per_pod']:.0f} B per pod; "
        f"limit 2x + 100 MiB = {(2 * m['retained']) / mib + 100:.0f} MiB); "
        f"traced peak {m['traced_peak_per_pod'] / KB:.2f} KB per pod; the cache's estimate "
        f"{m['estimated'] / mib:.1f} MiB"
    )
    print(
        f"[{label}]   without the field selector: {m['all_pods']:.0f} pods, sync {m['all_sync']:.2f}s "
        f"({m['all_sync'] / m['sync']:.2f}x), RSS after {m['all_after'] / mib:.1f} MiB "
        f"({m['all_after'] / max(m['after'], 1):.2f}x)"
    )
    if m.get("restarts"):
        print(f"[{label}]   lists begun again after a 410 (continue token expired): {m['restarts']:.0f}")


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def pod_events(store: Store) -> str:
    """A pod event on the big cache vs. on a 1-pod cache (O(1) means ~1x)."""
    sample = {
        "metadata": {"name": "p000001", "namespace": "default", "resourceVersion": "1"},
        "spec": {
            "nodeName": "n00000",
            "containers": [{"name": "c", "resources": {"requests": {"example.com/dongle": "1"}}}],
        },
        "status": {"phase": "Running"},
    }
    small = Store()
    small.apply_pod(sample)

    def apply_many(c: Store) -> float:
        t0 = time.perf_counter()
        for _ in range(5000):
            c.apply_pod(sample)
        return (time.perf_counter() - t0) / 5000

    big_t = min(apply_many(store) for _ in range(3))
    small_t = min(apply_many(small) for _ in range(3))
    return (
        f"events: {big_t * 1e6:.1f} us per pod event on the big cache vs {small_t * 1e6:.1f} us "
        f"on a 1-pod cache = {big_t / small_t:.2f}x"
    )


def warm_pages(kubeconfig: Path, nodes: int, requests: int, label: str) -> dict[str, float]:
    """Every page's p50/p95 printed; the p95s returned (ms), with the scrape's."""
    app = create_app(
        {"kubeconfig": str(kubeconfig), "in_cluster": "false", "cookie_secure": False, "read_only": False}
    )
    state = process_of(app).local
    state.start()  # as the served worker does (reading the runtime starts nothing)
    web = app.test_client()
    web.get("/")
    assert state.cluster.cache.wait_synced(900)
    store = state.cluster.store
    print(f"[{label}] {pod_events(store)}")
    rest = state.cluster.api.rest_client
    calls: list[str] = []
    original = rest.request
    rest.request = lambda m, u, *a, **k: (calls.append(m), original(m, u, *a, **k))[1]
    churn = iter(range(10**9))

    def pod_event() -> None:
        """A pod requesting a dongle is bound somewhere: one node's row changes, as in a live cluster."""
        k = next(churn)
        store.apply_pod(
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
        with store.objects.lock:
            store._rows.touch_all(store.objects.nodes)

    fragment = {"HX-Request": "true", "HX-Target": "grid"}
    pending_fragment = {"HX-Request": "true", "HX-Target": "pending-list"}
    pages = {
        "overview": ("/", {}, None),
        "overview, changed": ("/", {}, pod_event),
        "overview, rebuilt": ("/", {}, rebuild_all),
        "fragment": ("/?q=n0", fragment, None),
        "fragment, changed": ("/?q=n0", fragment, pod_event),
        "fragment, rebuilt": ("/?q=n0", fragment, rebuild_all),
        "fragment, zone": ("/?selector=zone%3Dz0", fragment, None),
        "fragment, zone, changed": ("/?selector=zone%3Dz0", fragment, pod_event),
        "node page": ("/nodes/n00001", {}, None),
        "node page, changed": ("/nodes/n00001", {}, pod_event),
        "pending page": ("/pending/", {}, None),
        "pending page, changed": ("/pending/", {}, pod_event),
        "pending fragment, changed": ("/pending/", pending_fragment, pod_event),
        "bulk page": ("/changes/bulk?find=n00", {}, None),
        "bulk page, changed": ("/changes/bulk?find=n00", {}, pod_event),
    }
    views = 0
    p50s: dict[str, float] = {}
    p95s: dict[str, float] = {}
    for name, (path, headers, before_each) in pages.items():
        times = []
        for _ in range(requests):
            if before_each is not None:
                before_each()
            t0 = time.perf_counter()
            resp = web.get(path, headers=headers)
            times.append(time.perf_counter() - t0)
            assert resp.status_code == 200, (path, resp.status_code)
            views += 1
        q = statistics.quantiles(times, n=20)
        p50s[name] = statistics.median(times)
        p95s[name] = q[18] * 1000
        print(f"[{label}] warm {name:26s} p50 {p50s[name] * 1000:7.1f} ms  p95 {q[18] * 1000:7.1f} ms")
    times = []
    for _ in range(requests // 4):
        pod_event()
        t0 = time.perf_counter()
        state.metrics.exposition()
        times.append(time.perf_counter() - t0)
    q = statistics.quantiles(times, n=20)
    p50, p95 = statistics.median(times) * 1000, q[18] * 1000
    print(f"[{label}] metrics scrape, changed  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms")
    p95s["metrics scrape, changed"] = p95
    for name in ("overview", "fragment"):
        print(
            f"[{label}] {name} after an event: {p50s[name + ', changed'] / p50s[name + ', rebuilt']:.2f}x "
            "the time with every row rebuilt (p50)"
        )
    gets = sum(1 for m in calls if m == "GET")
    print(
        f"[{label}] API load: {len(calls)} API requests ({gets} GET/list) over {views} page views "
        f"= {len(calls) / views:.3f} per view"
    )
    state.close()
    return p95s


def run_profile(name: str, nodes: int, steps: list[int], requests: int) -> None:
    plane = testenv.start(Path(tempfile.mkdtemp(prefix=f"extres-bench-{name}-")), bare=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        core = client.CoreV1Api(api)
        profile = PROFILES[name](api)
        seed_nodes(core, nodes)
        seed_pending(core, nodes, max(10, nodes // 50))
        done, results = 0, []
        for step in steps:
            took = seed_pods(profile, nodes, done, step)
            print(f"[{name}] seeded {step} pods on {nodes} nodes ({took:.0f}s for {step - done} pods)")
            if done == 0:
                print(f"[{name}] listed size: {listed_size(api) / KB:.2f} KB of JSON per pod")
            done = step
            results.append(measure_sync(plane.kubeconfig, step))
            print_sync(f"{name} {step}", results[-1])
        if len(results) > 1:
            first, last = results[0], results[-1]
            for key, what in (
                ("peak_per_pod", "peak RSS growth per pod"),
                ("retained_per_pod", "retained per pod"),
                ("traced_peak_per_pod", "traced peak per pod"),
            ):
                print(
                    f"[{name}] {what}: {first[key]:.0f} B at {first['pods']:.0f} pods, {last[key]:.0f} B at "
                    f"{last['pods']:.0f} pods = {last[key] / first[key]:.2f}x"
                )
            ratio = (last["sync"] / last["pods"]) / (first["sync"] / first["pods"])
            print(f"[{name}] sync time per pod: {ratio:.2f}x from the first step to the last")
        warm_pages(plane.kubeconfig, nodes, requests, name)
        api.close()
    finally:
        plane.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--steps", help="pod counts to measure at, comma-separated")
    ap.add_argument("--profiles", default="real,tiny")
    ap.add_argument("--requests", type=int, default=200)
    args = ap.parse_args()
    nodes = args.nodes or (300 if args.quick else 5000)
    steps = [int(x) for x in (args.steps or ("2000,6000" if args.quick else "10000,50000")).split(",")]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"kube-apiserver v1.20.2 on loopback; {nodes} nodes, pods {steps}"
    )
    print(f"command: python bench/cache_bench.py {' '.join(sys.argv[1:])}")
    for name in args.profiles.split(","):
        run_profile(name, nodes, steps, args.requests)


if __name__ == "__main__":
    main()
