"""Pages while the API server hangs or is down, against the same pages while it answers.

    python bench/outage.py                  # 5,000 nodes, 40 requests per page and phase
    python bench/outage.py --nodes 500 --requests 20

The app (gunicorn, token mode, a viewer's bearer token in each request, so every page needs an
access decision) reaches a real kube-apiserver through a loopback TCP proxy. Phases:
  live   the proxy passes everything;
  hung   every answer stalls: connections are accepted, nothing comes back, open ones (the
         watches) included; measured once the pages say they are stale;
  down   the proxy's port is closed: every connection is refused.
Per phase and page: p50/p95/max and the ratio of p95 to the live phase's; how long the pages
took to say "stale" after the hang began, and the slowest page during that time; and what a
token never seen before gets while the API server hangs (it cannot be verified: a quick 503).
Target: every page p95 < 100 ms while hung or down, marked stale.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from bench.cache_bench import seed_nodes  # noqa: E402
from extres_demo import testenv  # noqa: E402
from tests.chart_helpers import IMPERSONATE, apply_rbac, render  # noqa: E402
from tests.serving import Server  # noqa: E402
from tests.tcpproxy import TCPProxy  # noqa: E402

D = "example.com/dongle"
VIEWER = {"Authorization": "Bearer viewer-token"}
STALE = 'class="banner stale"'


def pages(nodes: int) -> list[tuple[str, str, dict[str, str]]]:
    grid = {"HX-Request": "true", "HX-Target": "grid"}
    return [
        ("overview", "/", {}),
        ("overview fragment", "/?q=", grid),
        ("node", f"/nodes/n{nodes // 2:05d}", {}),
        ("pending", "/pending/", {}),
        ("plan", f"/plan/?resource={D}&amount=2&replicas=3", {}),
        ("heat map", "/heat", {}),
        ("workloads", "/workloads/", {}),
        ("history", "/history/", {}),
    ]


def get(url: str, headers: dict[str, str], timeout: float = 30) -> tuple[int, str, float]:
    req = urllib.request.Request(url, headers=headers)
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read().decode(), time.perf_counter() - t0
    except urllib.error.HTTPError as exc:
        with exc:  # an error response holds its connection until closed
            return exc.code, exc.read().decode(), time.perf_counter() - t0
    except OSError as exc:
        return 0, str(exc), time.perf_counter() - t0


def measure(base: str, nodes: int, requests: int, phase: str) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    problems: list[str] = []
    for _ in range(requests):
        for name, path, extra in pages(nodes):
            status, body, took = get(base + path, {**VIEWER, **extra})
            times.setdefault(name, []).append(took)
            if status != 200:
                problems.append(f"{name}: {status} {body[:100]!r}")
            elif phase != "live" and STALE not in body:
                problems.append(f"{name}: not marked stale")
    for p in sorted(set(problems))[:10]:
        print(f"  {phase}: {p}")
    return times


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[-1] if len(xs) >= 2 else xs[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--requests", type=int, default=40)
    args = ap.parse_args()
    state = Path(tempfile.mkdtemp(prefix="extres-outage-"))
    plane = testenv.start(state, bare=True)
    proxy = TCPProxy(plane.port)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        seed_nodes(client.CoreV1Api(api), args.nodes, {D: "8"})
        apply_rbac(api, render(IMPERSONATE))
        kubeconfig = state / "via-proxy"
        kubeconfig.write_text(
            plane.kubeconfig.read_text().replace(f"127.0.0.1:{plane.port}", f"127.0.0.1:{proxy.port}")
        )
        server = Server(
            plane, EXTRES_KUBECONFIG=str(kubeconfig), EXTRES_AUTH_MODE="token", EXTRES_REQUEST_TIMEOUT="10"
        )
        try:
            for _, path, extra in pages(args.nodes):  # first sync and renders before the clock
                get(server.url + path, {**VIEWER, **extra})
            results = {"live": measure(server.url, args.nodes, args.requests, "live")}

            # hung: every answer stalls, on the open connections (the watches) too: nothing is cut,
            # so the app learns it only by asking (its /readyz probe every 10 s, 5 s timeout)
            proxy.delay = 3600.0
            began, slowest = time.monotonic(), 0.0
            while True:
                status, body, took = get(server.url + "/", VIEWER)
                slowest = max(slowest, took)
                if STALE in body or time.monotonic() - began > 120:
                    break
                time.sleep(0.5)
            to_stale = time.monotonic() - began
            status, body, new_took = get(server.url + "/", {"Authorization": "Bearer editor-token"})
            new_identity = (status, "cannot be verified" in body or "cannot verify" in body, new_took)
            results["hung"] = measure(server.url, args.nodes, args.requests, "hung")

            proxy.close()  # down: connections refused
            proxy.delay = 0.0
            results["down"] = measure(server.url, args.nodes, args.requests, "down")
        finally:
            server.stop()
        print(f"command: python bench/outage.py {' '.join(sys.argv[1:])}")
        print(f"{args.nodes} nodes, {args.requests} requests per page and phase, token mode (viewer)")
        print(f"hung: pages said stale after {to_stale:.1f} s; the slowest page meanwhile: {slowest:.2f} s")
        print(
            f"hung: a token never seen before got {new_identity[0]} in {new_identity[2] * 1000:.0f} ms"
            f" ({'says it cannot be verified now' if new_identity[1] else 'UNEXPECTED TEXT'})"
        )
        print(f"{'page':<18} {'phase':<5} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'p95/live':>8}")
        worst = 0.0
        for name, _, _ in pages(args.nodes):
            live = p95(results["live"][name])
            for phase, times in results.items():
                q = p95(times[name])
                if phase != "live":
                    worst = max(worst, q)
                print(
                    f"{name:<18} {phase:<5} {statistics.median(times[name]) * 1000:7.1f} {q * 1000:7.1f} "
                    f"{max(times[name]) * 1000:7.1f} {q / live:8.2f}"
                )
        print(f"worst p95 while hung or down: {worst * 1000:.1f} ms (target < 100 ms)")
        api.close()
    finally:
        proxy.close()
        plane.stop()


if __name__ == "__main__":
    main()
