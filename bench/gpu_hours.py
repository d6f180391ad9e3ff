"""GPU-hours' cost per pod event: the store's events for pods holding GPUs (each a hold opened and
closed in the ledger, a share priced by its node's labels) against the same events for pods
holding an extended resource that is no GPU (no ledger work), in one run; and the scrape of the
counters at 2,000 accounts (their bound).

    python bench/gpu_hours.py [--pods 5000] [--rounds 5]

The store is the app's own ``Store`` fed API-shaped nodes and pods (no control plane). Prints
microseconds per event for both, their ratio, and the counters' scrape time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.registry import Collector

from app.kube.state.store import Store
from app.kube.wire.projections import PodView
from app.metrics import gpu_hours
from tests import builders

SHARED = {
    "nvidia.com/gpu.replicas": "4",
    "nvidia.com/gpu.count": "8",
    "nvidia.com/gpu.sharing-strategy": "time-slicing",
}


def events(resource: str, pods: int) -> float:
    """Seconds per event: each pod bound (a hold opens), then completed (it closes)."""
    store = Store(team_label="team")
    for n in range(pods // 8 + 1):
        store.apply_node(builders.node(f"n{n}", {resource: "32"}, labels=SHARED))
    bound = [
        PodView.from_json(
            builders.pod(
                f"p{i}", f"n{i // 8}", {resource: "1"}, labels={"team": f"t{i % 50}"}, owner=("Job", f"j{i}")
            )
        )
        for i in range(pods)
    ]
    done = [
        PodView.from_json(
            builders.pod(
                f"p{i}",
                f"n{i // 8}",
                {resource: "1"},
                labels={"team": f"t{i % 50}"},
                owner=("Job", f"j{i}"),
                phase="Succeeded",
            )
        )
        for i in range(pods)
    ]
    t0 = time.perf_counter()
    for view in bound:
        store.put_pod(view)
    for view in done:
        store.put_pod(view)
    return (time.perf_counter() - t0) / (2 * pods)


def scrape(accounts: int) -> float:
    store = Store(team_label="team")
    store.apply_node(builders.node("n", {"nvidia.com/gpu": str(accounts)}))
    for i in range(accounts):
        store.apply_pod(
            builders.pod(
                f"p{i}", "n", {"nvidia.com/gpu": "1"}, labels={"team": f"t{i % 50}"}, owner=("Job", f"j{i}")
            )
        )

    class Families(Collector):
        def collect(self):  # type: ignore[no-untyped-def]
            return gpu_hours.families(store)

    registry = CollectorRegistry()
    registry.register(Families())
    t0 = time.perf_counter()
    for _ in range(20):
        generate_latest(registry)
    return (time.perf_counter() - t0) / 20


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    gpu, other = [], []
    for _ in range(args.rounds):  # alternated, so drift hits both alike
        gpu.append(events("nvidia.com/gpu", args.pods))
        other.append(events("example.com/dongle", args.pods))
    g, o = statistics.median(gpu), statistics.median(other)
    print(f"pod events, {args.pods} pods bound then completed (median of {args.rounds}):")
    print(f"  holding GPUs (the ledger at work): {g * 1e6:.1f} us per event")
    print(f"  holding a dongle (no ledger work): {o * 1e6:.1f} us per event")
    print(f"  ratio: {g / o:.2f}x")
    print(f"scrape of extres_gpu_seconds_* at 2,000 accounts: {scrape(2000) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
