"""A DRA driver rewriting its ResourceSlices: pages while slices churn.

    python bench/slice_churn.py                       # 1,000 nodes, 40 churning of 128 devices
    python bench/slice_churn.py --nodes 5000 --rate 10 --seconds 32

The app over its real store (the web lane's fake cluster holds a real Store; no API server: the
cost measured is the app's own), 8 devices per node in one slice each, one DeviceClass with a
CEL selector; ``--churning`` nodes hold a slice of 128 devices that a driver rewrites ``--rate``
times a second (each rewrite a new pool generation: the devices' content the same, or with
``--new-content`` one attribute changed per rewrite, so every device is new to the evaluator).
Meanwhile the overview, its grid fragment and a churning node's page are asked in turn. Prints
p50/p95 of each page while churning beside the same pages with no churn (the baseline, in the
same run), the evaluations made, and the target: p95 under 50 ms while churning.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import create_app  # noqa: E402
from app.domain.device_cel import Device  # noqa: E402
from app.domain.devices import ClassFacts, DeviceFacts, SliceFacts  # noqa: E402
from app.kube.wire.dra import ClassView, SliceView  # noqa: E402
from app.web.process import of as process_of  # noqa: E402
from tests.web.fake import FakeCluster  # noqa: E402

GPU, R = "gpu.example.com", "example.com/gpu"


def slice_of(node: str, generation: int, devices: int, variant: int = 0) -> SliceView:
    made = tuple(
        DeviceFacts(
            f"gpu-{k}",
            Device(GPU, (("index", k), ("model", "h100"), ("variant", variant)), (("memory", "80Gi"),)),
        )
        for k in range(devices)
    )
    return SliceView(SliceFacts(f"{node}-gpu", GPU, node, generation, 1, node, made))


def counting(evaluate):
    counted = [0]

    def wrapped(pairs):
        counted[0] += len(pairs)
        return evaluate(pairs)

    return wrapped, counted


def pages(web, paths, seconds: float) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name, _, _ in paths}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name, path, headers in paths:
            t0 = time.perf_counter()
            answer = web.get(path, headers=headers)
            times[name].append(time.perf_counter() - t0)
            assert answer.status_code == 200, (path, answer.status_code)
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--churning", type=int, default=40, help="nodes whose 128-device slice churns")
    ap.add_argument("--rate", type=float, default=10.0, help="slice rewrites a second")
    ap.add_argument("--seconds", type=float, default=32.0)
    ap.add_argument("--new-content", action="store_true", help="each rewrite changes every device")
    args = ap.parse_args()
    print(f"command: python bench/slice_churn.py {' '.join(sys.argv[1:])}")
    cluster = FakeCluster()
    for i in range(args.nodes):
        cluster.node(f"n{i:05d}", {})
    store = cluster.store
    selector = (f'device.attributes["{GPU}"].model == "h100"',)
    store.devices.put("deviceclasses", ClassView(ClassFacts("gpus", "2026-01-01T00:00:00Z", R, selector)))
    for i in range(args.nodes):
        node = f"n{i:05d}"
        store.devices.put("resourceslices", slice_of(node, 1, 128 if i < args.churning else 8))
    app = create_app({"in_cluster": "false", "read_only": False}, cluster=cluster)
    app.config["TESTING"] = True
    web = app.test_client()
    fragment = {"HX-Request": "true", "HX-Target": "grid"}
    paths = [("overview", "/", {}), ("fragment", "/?q=n0", fragment), ("node page", "/nodes/n00000", {})]
    pages(web, paths, 2.0)  # warm: every row and answer made once
    answers = process_of(app).local.answers
    answers.evaluate, evaluated = counting(answers.evaluate)
    quiet = pages(web, paths, args.seconds / 2)

    stop = threading.Event()
    rewrites = [0]

    def driver() -> None:
        generation = 1
        while not stop.is_set():
            generation += 1
            node = f"n{rewrites[0] % args.churning:05d}"
            variant = generation if args.new_content else 0
            store.devices.put("resourceslices", slice_of(node, generation, 128, variant))
            rewrites[0] += 1
            stop.wait(1 / args.rate)

    before = evaluated[0]
    thread = threading.Thread(target=driver, daemon=True)
    thread.start()
    churned = pages(web, paths, args.seconds)
    stop.set()
    thread.join()
    print(
        f"{args.nodes} nodes, {args.churning} of them with a 128-device slice rewritten {rewrites[0]} times "
        f"in {args.seconds:g} s; evaluations while churning: {evaluated[0] - before:,}"
    )
    worst = 0.0
    for name in churned:
        p = statistics.quantiles(churned[name], n=20)
        b = statistics.quantiles(quiet[name], n=20)
        worst = max(worst, p[18])
        print(
            f"{name:10s} churning p50 {p[9] * 1e3:6.1f} p95 {p[18] * 1e3:6.1f} ms   "
            f"quiet p95 {b[18] * 1e3:6.1f} ms = {p[18] / b[18]:.2f}x"
        )
    print(f"target: every page p95 < 50 ms while churning: {'met' if worst < 0.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
