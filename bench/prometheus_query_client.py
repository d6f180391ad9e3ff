"""Asking Prometheus: prometheus-api-client as it is meant to be used (``PrometheusConnect``,
``custom_query``, its JSON decoding into dicts) against the app's client (app/usage/prometheus.py:
one GET through requests, the body read against a byte limit and a deadline, decoded by msgspec
into slim structs), in the same run, on the same answer: an instant vector of N series (40,000
by default: 5,000 nodes x 8 GPUs) served by a local HTTP server.

    python bench/prometheus_query_client.py              # 40,000 series, 20 queries each
    python bench/prometheus_query_client.py --series 4000 --queries 50

Prints per client the p50 and p95 of a query's time and the peak memory one query allocates
(tracemalloc), with the app's client's ratio to the library's. The library is a dev dependency
only, for this bench: the app no longer installs it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.domain.usage_mapping import KEY  # noqa: E402
from app.usage.prometheus import Prometheus  # noqa: E402


def answer(series: int) -> bytes:
    result = [
        {
            "metric": {KEY: f"gpu-{i // 8:05d}|{i % 8}|GPU-{i:08x}|H100|ns|pod-{i // 4}"},
            "value": [1.7e9, "42.5"],
        }
        for i in range(series)
    ]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()


def serve(body: bytes) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure(ask: Callable[[], int], queries: int) -> tuple[float, float, float, int]:
    """(p50 s, p95 s, peak MiB of one query, samples in an answer)."""
    ask()  # warm: connections, imports
    times = []
    for _ in range(queries):
        t0 = time.perf_counter()
        n = ask()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    ask()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], peak / 2**20, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=40_000)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    server = serve(answer(args.series))
    url = f"http://127.0.0.1:{server.server_port}"
    from prometheus_api_client import PrometheusConnect

    library = PrometheusConnect(url=url, disable_ssl=True)
    ours = Prometheus(url, timeout=30.0)
    rows = {
        "prometheus-api-client (custom_query)": measure(lambda: len(library.custom_query("x")), args.queries),
        "app/usage/prometheus.py (requests + msgspec)": measure(lambda: len(ours.query("x")), args.queries),
    }
    server.shutdown()
    print(f"{args.series:,} series, {args.queries} queries each")
    for name, (p50, p95, peak, n) in rows.items():
        times = f"p50 {p50 * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"
        print(f"  {name:46s} {times}  peak {peak:6.1f} MiB  ({n:,} samples)")
    (lp50, _, lpeak, _), (op50, _, opeak, _) = rows.values()
    print(f"  the app's client / the library: time x{op50 / lp50:.2f}, memory x{opeak / lpeak:.2f}")


if __name__ == "__main__":
    main()
