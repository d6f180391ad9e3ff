"""The /metrics scrape at 5,000 nodes: the per-node families kept as text per row, against the
same samples formatted by prometheus_client on every scrape (how they were served before).

    python bench/metrics_bench.py [--nodes 5000] [--resources 3] [--scrapes 200]

The store is the app's own ``Store``, fed API-shaped nodes and pods (no control plane: the scrape
reads only the store's kept rows). Each scrape follows one event that changes one node's row, as
in a live cluster. Prints p50/p95 of both and the ratio. Target: p95 < 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from app.kube.state.store import Store
from app.metrics.nodes import NODE_FAMILIES, PREFIX, NodeFamilies


class Formatted:
    """The baseline: every sample of the per-node families formatted by prometheus_client at each
    scrape (how they were served before; tests/web/test_pages.py checks the kept text against it)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self):  # type: ignore[no-untyped-def]
        rows = self.store.overview_rows()[0]
        for name, help_text in NODE_FAMILIES:
            family = GaugeMetricFamily(PREFIX + name, help_text, labels=["node", "resource"])
            for row in rows:
                for resource, u in row.usage.items():
                    numbers = ("capacity", "allocatable", "requested")
                    if name in numbers and (u.advertised or getattr(u, name)):
                        family.add_metric([row.name, resource], getattr(u, name))
                    elif name == "allocated" and u.allocated is not None:
                        family.add_metric([row.name, resource], u.allocated)
                if name == "drift":
                    for resource in sorted(row.drifted):
                        family.add_metric([row.name, resource], 1)
            yield family


def pod(name: str, node: str, resource: str) -> dict:
    container = {"name": "c", "resources": {"requests": {resource: "1"}}}
    return {
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "1"},
        "spec": {"nodeName": node, "containers": [container]},
        "status": {"phase": "Running"},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--resources", type=int, default=3)
    ap.add_argument("--scrapes", type=int, default=200)
    args = ap.parse_args()
    store = Store()
    names = [f"r{i}.example.com/dongle" for i in range(args.resources)]
    for i in range(args.nodes):
        amounts = {n: "8" for n in names}
        store.apply_node({"metadata": {"name": f"n{i:05d}", "resourceVersion": "1"},
                          "status": {"capacity": amounts, "allocatable": amounts}})  # fmt: skip
        store.apply_pod(pod(f"p{i}", f"n{i:05d}", names[0]))
    registry = CollectorRegistry()
    registry.register(Formatted(store))
    kept = NodeFamilies()
    kept.text(store)
    k = 0

    def event() -> None:
        nonlocal k
        k += 1
        store.apply_pod(pod(f"churn-{k}", f"n{k * 7 % args.nodes:05d}", names[0]))

    def timed(scrape) -> list[float]:  # type: ignore[no-untyped-def]
        out = []
        for _ in range(args.scrapes):
            event()
            t0 = time.perf_counter()
            scrape()
            out.append(time.perf_counter() - t0)
        return out

    baseline = timed(lambda: generate_latest(registry))
    ours = timed(lambda: kept.text(store))
    samples = kept.text(store).count(b"\n") - 2 * len(NODE_FAMILIES)
    print(f"command: python bench/metrics_bench.py {' '.join(sys.argv[1:])}")
    print(
        f"{args.nodes} nodes x {args.resources} resources: {samples} samples; a row changes before a scrape"
    )
    for label, times in (("formatted at each scrape", baseline), ("kept per row", ours)):
        p95 = statistics.quantiles(times, n=20)[18]
        print(f"{label:26s} p50 {statistics.median(times) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms")
    ratio = statistics.quantiles(ours, n=20)[18] / statistics.quantiles(baseline, n=20)[18]
    print(f"kept per row: {ratio:.3f}x the p95 of formatting at each scrape")


if __name__ == "__main__":
    main()
