"""A bounded load test on loopback: viewers polling fragments every 5 s at 5,000 nodes, and an
editor making changes, against the app served by gunicorn and a real kube-apiserver.

    python bench/load.py                        # 5,000 nodes, 100 viewers, 60 s
    python bench/load.py --viewers 20 --seconds 20 --nodes 500

Prints the requests made, errors, p50/p95/max latency per kind, and whether every change the
editor sent was applied exactly once (its Event and the node's final capacity). The request
count and the duration are capped; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from bench.cache_bench import seed_nodes  # noqa: E402
from extres_demo import testenv  # noqa: E402
from tests.serving import Server  # noqa: E402

D = "example.com/dongle"
MAX_REQUESTS = 20_000
FRAGMENTS = (
    ("/?q=", {"HX-Request": "true", "HX-Target": "grid"}),
    ("/pending/", {"HX-Request": "true", "HX-Target": "pending-list"}),
)


@dataclass
class Result:
    times: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)  # node -> the capacity the editor set
    lost: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)

    def add(self, kind: str, took: float) -> None:
        self.times.setdefault(kind, []).append(took)

    @property
    def requests(self) -> int:
        return sum(len(t) for t in self.times.values())

    @property
    def slowest(self) -> float:
        return max((max(t) for t in self.times.values() if t), default=0.0)

    def report(self) -> list[str]:
        lines = []
        for kind, t in sorted(self.times.items()):
            q = statistics.quantiles(t, n=20, method="inclusive") if len(t) > 1 else t * 19
            lines.append(
                f"{kind:18s} {len(t):6d} requests  p50 {statistics.median(t) * 1000:7.1f} ms  "
                f"p95 {q[18] * 1000:7.1f} ms  max {max(t) * 1000:7.1f} ms"
            )
        lines.append(
            f"errors: {len(self.errors)}; changes sent {len(self.sent)}, lost {len(self.lost)}, "
            f"applied twice {len(self.twice)}; slowest request {self.slowest * 1000:.0f} ms"
        )
        return lines


def seed(core: client.CoreV1Api, nodes: int) -> None:
    seed_nodes(core, nodes, {D: "8"})


def get(url: str, headers: dict[str, str], opener=None, data: bytes | None = None) -> tuple[int, str, float]:
    req = urllib.request.Request(url, data=data, headers=headers)
    t0 = time.perf_counter()
    try:
        with (opener.open if opener else urllib.request.urlopen)(req, timeout=10) as resp:
            body = resp.read().decode()
            return resp.status, body, time.perf_counter() - t0
    except urllib.error.HTTPError as exc:
        with exc:  # an error response holds its connection open until closed
            return exc.code, exc.read().decode(), time.perf_counter() - t0
    except OSError as exc:
        return 0, str(exc), time.perf_counter() - t0


def run(
    server: Server, core: client.CoreV1Api, nodes: int, viewers: int, seconds: float, changes: int
) -> Result:
    result = Result()
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def viewer(k: int) -> None:
        time.sleep(5.0 * k / viewers)  # spread the polls over the 5 s period
        i = k
        while time.monotonic() < stop and result.requests < MAX_REQUESTS:
            path, headers = FRAGMENTS[i % len(FRAGMENTS)]
            status, body, took = get(server.url + path, headers)
            with lock:
                result.add(path.split("?")[0] + " fragment", took)
                if status != 200:
                    result.errors.append(f"{path}: {status} {body[:120]}")
            i += 1
            time.sleep(max(0.0, 5.0 - took))

    def editor() -> None:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        period = seconds / (changes + 1)
        for j in range(changes):
            time.sleep(period)
            name, value = f"n{(j * 37) % nodes:05d}", 9 + j
            status, form, took = get(
                f"{server.url}/changes/nodes/{name}/resources/new?resource={D}", {}, opener
            )
            with lock:
                result.add("change form", took)
            m = re.search(r'name="csrf_token" value="([^"]+)"', form)
            if status != 200 or not m:
                result.errors.append(f"form {name}: {status}")
                continue
            body = urllib.parse.urlencode(
                {"csrf_token": m.group(1), "resource": D, "quantity": str(value), "expected": "8"}
            )
            status, text, took = get(
                f"{server.url}/changes/nodes/{name}/resources", {}, opener, body.encode()
            )
            with lock:
                result.add("change post", took)
                result.sent[name] = value
                if status != 200:
                    result.errors.append(f"change {name}: {status} {text[:120]}")

    threads = [threading.Thread(target=viewer, args=(k,)) for k in range(viewers)] + [
        threading.Thread(target=editor)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # every change sent: applied exactly once (one Event) and the node holds it
    events: dict[str, list[str]] = {}
    for e in core.list_namespaced_event("default").items:
        if e.reason == "ExtendedResourceChanged":
            events.setdefault(e.involved_object.name, []).append(e.message)
    for name, value in result.sent.items():
        capacity = core.read_node_status(name).status.capacity.get(D)
        mine = [m for m in events.get(name, []) if f"→ {value}" in m]
        if capacity != str(value) or not mine:
            result.lost.append(name)
        if len(events.get(name, [])) > 1:
            result.twice.append(name)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--viewers", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--changes", type=int, default=20)
    args = ap.parse_args()
    plane = testenv.start(Path(tempfile.mkdtemp(prefix="extres-load-")), bare=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        core = client.CoreV1Api(api)
        seed(core, args.nodes)
        server = Server(plane)
        try:
            for path, headers in FRAGMENTS:  # the first sync and the first render happen before the clock
                get(server.url + path, headers)
            result = run(server, core, args.nodes, args.viewers, args.seconds, args.changes)
        finally:
            server.stop()
        print(f"command: python bench/load.py {' '.join(sys.argv[1:])}")
        print(
            f"{args.nodes} nodes, {args.viewers} viewers polling every 5 s "
            f"for {args.seconds:.0f} s, one editor"
        )
        for line in result.report():
            print(line)
        api.close()
    finally:
        plane.stop()


if __name__ == "__main__":
    main()
