"""The app's own event limit: a recorded stream of real watch events fed into the cache and the
render path as fast as they go.

    python bench/replay.py record events.jsonl [--nodes 300] [--seconds 90]
    python bench/replay.py replay events.jsonl [--copies 20]

record: the full control plane (kube-scheduler, kube-controller-manager; kwok as every kubelet)
with ``--nodes`` nodes advertising an extended resource and a DRA-served one. While the bench
drives a cluster's usual churn for ``--seconds`` (a Deployment scaled between 10 and 120 replicas
every 10 s, Jobs whose pods run and complete, a node's capacity patched every second as an
operator or a heartbeat-fed controller would, a driver republishing a node's ResourceSlice every
2 s), raw watches on nodes, pods and ResourceSlices (the cache's own selection) write every event,
byte for byte, beside the lists they started from.

replay: no control plane. The lists are taken as the cache takes them, then the events go through
the cache's own path (its readers, ``ClusterCache._apply``, the store) as fast as one thread can
feed them, ``--copies`` times (each copy's objects renamed and its resourceVersions moved past
the last, so every event is new to the store). Printed: events/s on one core with nothing else,
then again while a second thread renders the overview, the pending page and a node page (the
Flask test client, the app as it serves), with the pages' p50/p95 during the run; then paced at
each of ``--rates`` events a second for 10 s with the pages rendering; and each run's pages' p95
on the settled store, the baseline of the same run. Seconds are this machine's;
events per core-second and the ratio to the baseline carry.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
from kubernetes import client

KINDS = ("nodes", "pods", "resourceslices")
D = "example.com/dongle"


# ---- record -----------------------------------------------------------------------------
def record(out: Path, nodes: int, seconds: float) -> None:
    from tempfile import mkdtemp

    from app.kube.api.cache import ClusterCache
    from app.kube.api.client import ClusterConfig, api_client, load_configuration
    from bench.cache_bench import seed_nodes
    from extres_demo import testenv

    plane = testenv.start(Path(mkdtemp(prefix="extres-replay-")), scheduler=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        core = client.CoreV1Api(api)
        seed_nodes(core, nodes, {D: "8"})
        # its own selection, list and watch calls, nothing started
        lister = ClusterCache(api, watch_timeout=int(seconds) + 30)
        lines: list[bytes] = []
        versions = {}
        for kind in KINDS:
            pages: list[bytes] = []

            def take(data: bytes, pages: list[bytes] = pages) -> None:
                pages.append(data)

            try:
                versions[kind] = lister.requests.pages(kind, take)
            except client.ApiException:
                continue  # not served here
            lines += [json.dumps({"list": kind, "page": p.decode()}).encode() for p in pages]
        stop = threading.Event()
        lock = threading.Lock()

        def watch(kind: str) -> None:
            for line in lister._lines(kind, versions[kind]):
                with lock:
                    lines.append(json.dumps({"kind": kind, "event": line.decode()}).encode())
                if stop.is_set():
                    break

        watchers = [threading.Thread(target=watch, args=(k,), daemon=True) for k in versions]
        for t in watchers:
            t.start()
        drive(api, nodes, seconds)
        time.sleep(3)
        stop.set()
        with lock:
            out.write_bytes(b"\n".join(lines) + b"\n")
        events = sum(1 for line in lines if b'"event": ' in line)
        print(f"recorded {events} events over {seconds:.0f} s on {nodes} nodes into {out}")
    finally:
        plane.stop()


def drive(api: client.ApiClient, nodes: int, seconds: float) -> None:
    """A cluster's usual churn for ``seconds`` (bench/churn.py's Jobs and Deployment, plus a
    capacity patch every second, a republished ResourceSlice every 2 s, and pods that stay
    Pending), then stopped."""
    from bench.churn import Churn

    core, dra = client.CoreV1Api(api), client.ResourceV1Api(api)
    churn = Churn(api, nodes, rate=20.0)
    with contextlib.suppress(client.ApiException):  # where resource.k8s.io/v1 is served
        dra.create_device_class(
            {"metadata": {"name": "replay-gpu"}, "spec": {"extendedResourceName": "replay.example.com/gpu"}}
        )
    for i in range(3):  # never placed: the pending page has cards to render
        body: Any = {
            "metadata": {"name": f"waiting-{i}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {D: str(100 + i)}}}]},
        }
        core.create_namespaced_pod("default", body)

    def patches() -> None:
        i = 0
        while not churn.stop.wait(1.0):
            cap = str(8 + i % 4)
            with contextlib.suppress(client.ApiException):
                core.patch_node_status(
                    f"n{i % nodes:05d}",
                    [{"op": "add", "path": "/status/capacity/example.com~1dongle", "value": cap}],
                )
            i += 1

    def slices() -> None:
        generation = 0
        while not churn.stop.wait(2.0):
            generation += 1
            node = f"n{generation % min(nodes, 20):05d}"
            spec = {
                "driver": "replay.example.com",
                "nodeName": node,
                "pool": {"name": node, "generation": generation, "resourceSliceCount": 1},
                "devices": [{"name": f"g{d}"} for d in range(1 + generation % 4)],
            }
            with contextlib.suppress(client.ApiException):
                dra.delete_resource_slice(f"{node}-gpu")
            with contextlib.suppress(client.ApiException):
                dra.create_resource_slice({"metadata": {"name": f"{node}-gpu"}, "spec": spec})

    threads = [
        threading.Thread(target=f, daemon=True) for f in (churn.jobs, churn.deployment, patches, slices)
    ]
    for t in threads:
        t.start()
    time.sleep(seconds)
    churn.stop.set()
    for t in threads:
        t.join(timeout=30)


# ---- replay -----------------------------------------------------------------------------
class _Event(msgspec.Struct):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"null")


def _renamed(raw: dict[str, Any], copy: int, offset: int) -> dict[str, Any]:
    """An event object as a new object of copy ``copy``: another name, a later resourceVersion."""
    meta = raw.get("metadata") or {}
    if copy:
        meta["name"] = f"{meta.get('name', '')}-c{copy}"
        spec = raw.get("spec") or {}
        if spec.get("nodeName"):
            spec["nodeName"] = f"{spec['nodeName']}-c{copy}"
    if meta.get("resourceVersion"):
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + offset)
    return raw


def load(path: Path, copies: int) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes, bytes]]]:
    """The lists (kind, page) and the events (kind, type, object) of ``copies`` copies."""
    lists, events = [], []
    raw = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    top = max(
        int(json.loads(r["event"])["object"]["metadata"].get("resourceVersion") or 0)
        for r in raw
        if "event" in r
    )
    for copy in range(copies):
        offset = copy * (top + 1)
        for r in raw:
            if "list" in r:
                page = json.loads(r["page"])
                page["items"] = [_renamed(i, copy, offset) for i in page.get("items") or ()]
                lists.append((r["list"], json.dumps(page).encode()))
            else:
                e = json.loads(r["event"])
                if e["type"] in ("BOOKMARK", "ERROR"):
                    continue
                events.append(
                    (r["kind"], e["type"].encode(), json.dumps(_renamed(e["object"], copy, offset)).encode())
                )
    return lists, events


def feed(cache: Any, events: list[tuple[str, bytes, bytes]], rate: float | None = None) -> float:
    """Every event through the cache's own path, as fast as they go or ``rate`` a second (in
    10 ms batches); the wall time."""
    readers = cache._readers()
    t = time.perf_counter()
    for i, (kind, kind_type, obj) in enumerate(events):
        if rate is not None and i % max(1, int(rate / 100)) == 0:
            ahead = t + i / rate - time.perf_counter()
            if ahead > 0:
                time.sleep(ahead)
        view, _, problem = readers[kind].one(obj)
        cache._apply(kind, kind_type == b"DELETED", view, problem)
    return time.perf_counter() - t


def replay(path: Path, copies: int, rates: list[float]) -> None:
    from app import create_app
    from app.domain.accounting import resize_rule
    from app.kube.api.cache import ClusterCache
    from app.kube.wire.reading import readers as readers_for
    from tests.helpers import browser
    from tests.web.fake import FakeCluster

    lists, events = load(path, copies)
    print(f"{len(events)} events ({copies} copies of the recording), {len(lists)} list pages")
    results = {}
    runs: list[tuple[str, bool, float | None]] = [("alone", False, None), ("with pages", True, None)]
    runs += [(f"with pages, {r:,.0f} events/s", True, r) for r in rates]
    for label, with_pages, rate in runs:
        cluster = FakeCluster()
        cache = ClusterCache(client.ApiClient(), store=cluster.store)
        cache.server_minor = 37  # the newest rules, without asking a server for /version
        cache._by_version = readers_for(resize_rule(37))
        readers = cache._readers()
        by_kind: dict[str, list[Any]] = {}
        for kind, page in lists:
            by_kind.setdefault(kind, []).extend(readers[kind].page(page).views)
        for kind, views in by_kind.items():
            if kind == "pods":
                from app.kube.state.pod_index import PodIndex

                index = PodIndex()
                for v in views:
                    index.put(v)
                cluster.store.replace(kind, index)
            else:
                cluster.store.replace(kind, views)
        app = create_app({"in_cluster": "false", "read_only": False}, cluster=cluster)
        web = browser(app)
        node = next(iter(cluster.store.objects.node_names()))
        paths = ["/", "/pending/", f"/nodes/{node}"]
        for p in paths:
            web.get(p)  # warm
        timings: list[float] = []
        per_path: dict[str, list[float]] = {p: [] for p in paths}
        done = threading.Event()

        def pages(
            web: Any = web,
            paths: list[str] = paths,
            timings: list[float] = timings,
            done: Any = done,
            per_path: dict[str, list[float]] = per_path,
        ) -> None:
            while not done.is_set():
                for p in paths:
                    t = time.perf_counter()
                    web.get(p)
                    timings.append(time.perf_counter() - t)
                    per_path[p].append(timings[-1])

        worker = threading.Thread(target=pages, daemon=True) if with_pages else None
        if worker:
            worker.start()
        took = feed(cache, events if rate is None else events[: int(rate * 10)], rate)
        done.set()
        if worker:
            worker.join()
        settled = []
        for _ in range(20):
            for p in paths:
                t = time.perf_counter()
                web.get(p)
                settled.append(time.perf_counter() - t)
        fed = len(events) if rate is None else min(len(events), int(rate * 10))
        results[label] = (fed / took, timings, settled)
        line = f"[{label}] {fed / took:,.0f} events/s over {took:.1f} s"
        if timings:
            q = statistics.quantiles(timings, n=20)
            p50 = statistics.median(timings) * 1000
            by_page = ", ".join(
                f"{p.split('/')[1] or 'overview'} {statistics.quantiles(t, n=20)[18] * 1000:.0f}"
                for p, t in per_path.items()
                if len(t) > 1
            )
            line += (
                f"; pages during the run p50 {p50:.1f} ms, p95 {q[18] * 1000:.1f} ms ({len(timings)} pages"
            )
            line += f"; p95 by page, ms: {by_page})"
        qs = statistics.quantiles(settled, n=20)
        line += f"; pages settled p95 {qs[18] * 1000:.1f} ms (the baseline)"
        print(line, flush=True)
    alone, busy = results["alone"][0], results["with pages"][0]
    print(
        f"events/s with pages rendering beside them: {busy / alone:.2f}x of alone "
        "(both threads share one interpreter)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("record", "replay"))
    ap.add_argument("file", type=Path)
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--rates", default="1000,5000", help="paced runs: events a second, 10 s each")
    args = ap.parse_args()
    if args.mode == "record":
        record(args.file, args.nodes, args.seconds)
    else:
        replay(args.file, args.copies, [float(r) for r in args.rates.split(",") if r])


if __name__ == "__main__":
    main()
