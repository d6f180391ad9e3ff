"""GPU usage at scale: 5,000 nodes x 8 GPUs (40,000 GPUs, 120,000 series: utilization, memory used
and free) in a real Prometheus (Debian's), scraped from a generated target in dcgm-exporter's
exposition (extres_demo.dcgm_standin: a stand-in for DCGM). Pods hold every GPU, 2 pods of 4 a
node, one in ten of them idle.

The same pages, over the same store, are asked without usage and with it, in the same run:

    python bench/gpu_usage.py                     # 5,000 nodes x 8 GPUs, 200 requests a page
    python bench/gpu_usage.py --nodes 500 --requests 50

Prints Prometheus' ingestion check, the refresh's time (its three queries and the reading),
the memory the app holds for usage (retained, by tracemalloc, and the process's RSS before and
after), and per page p50/p95 without and with usage, with their ratio. The app runs in this
process (Flask's test client: no network between the pages and their timer); the store is the
app's own, fed the JSON the API server would send (tests/web/fake.py), as the watches feed it.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import resource
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
import urllib.request
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402

from app import create_app  # noqa: E402
from app.domain.usage_mapping import DCGM  # noqa: E402
from app.runtime import reads  # noqa: E402
from app.serving import malloc  # noqa: E402
from app.usage.prometheus import Prometheus  # noqa: E402
from app.web.process import of as process_of  # noqa: E402
from extres_demo.dcgm_standin import UTILIZATION_ANNOTATION, Holder, families  # noqa: E402
from extres_demo.prometheus import PrometheusProcess  # noqa: E402
from tests.helpers import browser  # noqa: E402
from tests.web.fake import FakeCluster  # noqa: E402

GPU = "nvidia.com/gpu"
GPUS = 8
BUSY, IDLE = "60-100", "0-2"
REFRESHES = 5
DCGM_ONLY = (DCGM,)
WINDOW = timedelta(hours=1)
PAGES = ("/?q=", "/nodes/gpu-00042", "/idle/", "/workloads/?resource=nvidia.com/gpu", "/pending/")


def holders(node: int) -> list[Holder]:
    """Two pods of 4 GPUs on each node; every tenth node's second pod idles."""
    idle = node % 10 == 0
    return [
        Holder(f"team-{node % 20}", f"train-{node:05d}-a", "main", 4, {UTILIZATION_ANNOTATION: BUSY}),
        Holder(
            f"team-{node % 20}",
            f"train-{node:05d}-b",
            "main",
            4,
            {UTILIZATION_ANNOTATION: IDLE if idle else BUSY},
        ),
    ]


def exposition(nodes: int) -> bytes:
    class Collector:
        def collect(self):
            return families({f"gpu-{i:05d}": (GPUS, holders(i)) for i in range(nodes)})

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Collector())
    return generate_latest(registry)


def serve(body: bytes) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"127.0.0.1:{server.server_port}"


def cluster_of(nodes: int) -> FakeCluster:
    cluster = FakeCluster()
    for i in range(nodes):
        name = f"gpu-{i:05d}"
        cluster.node(name, {GPU: str(GPUS)})
        for h in holders(i):
            cluster.pod(h.pod, name, {GPU: "4"}, namespace=h.namespace, owner=("Job", h.pod))
    return cluster


def rss() -> int:
    text = Path("/proc/self/status").read_text()
    return next(int(x.split()[1]) * 1024 for x in text.splitlines() if x.startswith("VmRSS:"))


def timings(app: Any, requests: int) -> dict[str, list[float]]:
    client = browser(app)
    out: dict[str, list[float]] = {}
    for page in PAGES:
        for _ in range(requests):
            began = time.perf_counter()
            response = client.get(page)
            out.setdefault(page, []).append(time.perf_counter() - began)
            assert response.status_code == 200, (page, response.status_code)
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def series_count(url: str) -> int:
    with urllib.request.urlopen(f"{url}/api/v1/query?query=count(DCGM_FI_DEV_GPU_UTIL)", timeout=30) as r:
        body = r.read().decode()
    result = json.loads(body)["data"]["result"]
    return int(float(result[0]["value"][1])) if result else 0


def main() -> None:
    malloc.tune()  # as the served worker does (app.serving's post_fork)
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    print(f"command: python bench/gpu_usage.py --nodes {args.nodes} --requests {args.requests}", flush=True)
    body = exposition(args.nodes)
    target_server, target = serve(body)
    print(f"scrape target: {len(body) / 2**20:.1f} MiB of exposition, {args.nodes * GPUS:,} GPUs", flush=True)
    work = Path(tempfile.mkdtemp(prefix="extres-gpu-bench-"))
    prometheus = PrometheusProcess(work, {"dcgm-exporter": target}, interval="5s")
    try:
        deadline = time.monotonic() + 180
        while series_count(prometheus.url) < args.nodes * GPUS:
            if time.monotonic() > deadline:
                raise SystemExit("Prometheus did not ingest every series within 180 s")
            time.sleep(1)
        time.sleep(11)  # a few scrapes into each series' window
        print(f"Prometheus holds {series_count(prometheus.url):,} utilization series", flush=True)

        began = time.perf_counter()
        cluster = cluster_of(args.nodes)
        print(
            f"store: {args.nodes:,} nodes, {2 * args.nodes:,} pods, "
            f"fed in {time.perf_counter() - began:.1f} s"
        )

        plain = create_app({"in_cluster": "false", "read_only": True}, cluster=cluster)
        timings(plain, 3)  # templates compiled, memos warm
        without = timings(plain, args.requests)

        usage_app = create_app(
            {"in_cluster": "false", "read_only": True, "prometheus_url": prometheus.url},
            cluster=cluster,
        )
        poller = process_of(usage_app).local.usage
        gc.collect()
        rss_before = rss()
        refreshes, grown = [], []
        for _ in range(REFRESHES):  # steady state: each refresh replaces the last reading
            began = time.perf_counter()
            poller.poll()
            refreshes.append(time.perf_counter() - began)
            status = poller.status()
            assert status.reading is not None and not status.error, status.error
            gc.collect()
            grown.append((rss() - rss_before) / 2**20)
        child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB
        reading = status.reading
        tracemalloc.start()
        held = pickle.loads(pickle.dumps(reading))  # the reading as the worker receives it
        retained = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del held
        devices = sum(len(g) for g in reading.nodes.values())
        source = Prometheus(prometheus.url, timeout=30)
        began = time.perf_counter()
        for m in DCGM_ONLY:
            for expr in (
                m.utilization_query(WINDOW),
                m.memory_query(m.memory_used),
                m.memory_query(m.memory_free),
            ):
                source.query(expr)
        queries = time.perf_counter() - began
        print(
            f"refresh ({devices:,} GPUs read; in a child process): "
            f"median {statistics.median(refreshes):.2f} s of {REFRESHES}, "
            f"of which the three queries {queries:.2f} s; the child's peak RSS {child_peak:.0f} MiB"
        )
        print(
            f"the worker's added memory: a reading holds {retained / 2**20:.1f} MiB; RSS after each refresh "
            f"+{', +'.join(f'{g:.1f}' for g in grown)} MiB (baseline {rss_before / 2**20:.0f} MiB)",
            flush=True,
        )
        idle = reads.idle_pods(process_of(usage_app).local)
        print(
            f"idle pods: {len(idle)}, "
            f"{sum(i.device_hours for i in idle):.1f} GPU-hours held idle in the window"
        )

        timings(usage_app, 3)
        with_usage = timings(usage_app, args.requests)
        poller.poll()  # a new reading: the first page after it renders its rows again
        cold = {page: t[0] for page, t in timings(usage_app, 1).items()}

        print(
            f"{'page':40} {'p50 without':>12} {'p95 without':>12} {'p50 with':>10} {'p95 with':>10} "
            f"{'p95 ratio':>9} {'first after a refresh':>22}"
        )
        for page in PAGES:
            a, b = without[page], with_usage[page]
            print(
                f"{page:40} {p(a, 50) * 1000:10.1f}ms {p(a, 95) * 1000:10.1f}ms {p(b, 50) * 1000:8.1f}ms "
                f"{p(b, 95) * 1000:8.1f}ms {p(b, 95) / p(a, 95):8.2f}x {cold[page] * 1000:20.1f}ms"
            )
    finally:
        prometheus.stop()
        target_server.shutdown()


if __name__ == "__main__":
    main()
