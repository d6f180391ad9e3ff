"""Ten clusters of 5,000 pods each: the memory one cluster costs beside a single-cluster install,
and the Fleet page's p50/p95 beside one cluster's overview, in the same run.

    python bench/fleet.py [--clusters 10] [--pods 5000] [--nodes 500] [--requests 200]

Each cluster is a runtime (app/runtime/cluster.py) with its own Store, fed API-shaped nodes and pods as
the watches would (tests/web/fake.py: no control plane; the pages read only the stores). Memory:
each count of clusters is built in a fresh process and its RSS growth over an empty app is
read there (a single-cluster install is the same app with one); per cluster = growth / count.
Pages: with every cluster built, one pod event in one cluster before each request (the case a
live page meets), the Fleet page against the overview of one cluster. Targets (issue "Several
clusters"): Fleet page p95 under 50 ms; memory per cluster no more than one single-cluster
install's.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from app.web.process import of as process_of

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

R = "example.com/gpu"


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def build(clusters: int, pods: int, nodes: int):  # type: ignore[no-untyped-def]
    """An app (in-process evaluator, no Prometheus) whose fleet has ``clusters`` clusters (the
    local one and members), each with ``nodes`` nodes of 8 and ``pods`` pods of 1 (or none)."""
    from app import create_app
    from app.runtime.cluster import Runtime
    from tests.web.fake import FakeCluster

    def fed(name: str) -> FakeCluster:
        cluster = FakeCluster()
        for n in range(nodes):
            cluster.node(f"{name}-n{n:04d}", {R: "8"})
        for p in range(pods):
            cluster.pod(f"p{p:05d}", f"{name}-n{p % nodes:04d}", {R: "1"}, namespace=f"ns{p % 20}")
        return cluster

    local = fed("c0") if clusters else FakeCluster()
    app = create_app({"in_cluster": "false", "selector_evaluator": "in-process"}, cluster=local)
    fleet = process_of(app).fleet
    members = []
    for i in range(1, clusters):
        settings = fleet.local.settings.replaced(cluster_name=f"c{i}")
        fleet.members[f"c{i}"] = Runtime(settings, fed(f"c{i}"))
        members.append(fleet.members[f"c{i}"])
    return app, members


def child(clusters: int, pods: int, nodes: int) -> None:
    """In a fresh process: RSS growth (KiB) of an app with ``clusters`` clusters over an empty
    one, after one view of each page that keeps something (its memos count too)."""
    base_app, _ = build(0, 0, 1)
    base_app.test_client().get("/")
    gc.collect()
    before = rss_kib()
    app, _ = build(clusters, pods, nodes)
    web = app.test_client()
    web.get("/")
    web.get("/fleet/")
    gc.collect()
    print(json.dumps({"growth_kib": rss_kib() - before}))


def measured(clusters: int, pods: int, nodes: int) -> int:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(clusters), "--pods", str(pods), "--nodes", str(nodes)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return int(json.loads(out.stdout.strip().splitlines()[-1])["growth_kib"])


def timed(web, path: str, requests: int, event) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for i in range(requests):
        event(i)
        t = time.perf_counter()
        resp = web.get(path)
        times.append((time.perf_counter() - t) * 1000)
        assert resp.status_code == 200, resp.status_code
    return times


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", type=int, default=10)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.pods, args.nodes)
        return
    one = measured(1, args.pods, args.nodes)
    many = measured(args.clusters, args.pods, args.nodes)
    per = many / args.clusters
    print(
        f"memory: one single-cluster install +{one / 1024:.1f} MiB; {args.clusters} clusters "
        f"+{many / 1024:.1f} MiB, {per / 1024:.1f} MiB a cluster: x{per / one:.2f} of one install"
    )

    app, members = build(args.clusters, args.pods, args.nodes)
    from tests.helpers import browser

    web = browser(app)
    clusters = [process_of(app).fleet.local._cluster, *(m._cluster for m in members)]

    def event(i: int) -> None:  # one pod comes in one cluster, as a live page meets it
        cluster = clusters[i % len(clusters)]
        cluster.pod(f"e{i:05d}", f"c{i % len(clusters)}-n{i % args.nodes:04d}", {R: "1"})

    web.get("/")
    web.get("/fleet/")
    overview = timed(web, "/", args.requests, event)
    fleet = timed(web, "/fleet/", args.requests, event)
    print(f"overview of one cluster: p50 {statistics.median(overview):.1f} ms, p95 {p95(overview):.1f} ms")
    print(f"fleet page, {args.clusters} clusters: p50 {statistics.median(fleet):.1f} ms, "
          f"p95 {p95(fleet):.1f} ms: x{p95(fleet) / p95(overview):.2f} of the overview's p95")  # fmt: skip


if __name__ == "__main__":
    main()
