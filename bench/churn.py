"""A cluster that never stands still: what its churn costs the dashboard.

    python bench/churn.py                            # 5,000 nodes, 10,000 pods, 20 pod events/s, 300 s
    python bench/churn.py --rates 5,20,50 --seconds 300
    python bench/churn.py --quick                    # 300 nodes, 1,000 pods, 10 events/s, 60 s

The full control plane (etcd, kube-apiserver, kube-scheduler, kube-controller-manager) with kwok
as every node's kubelet at kubelet defaults: a Lease renewed every 10 s (a 40 s lease, a quarter of
it), the node's status reported every 5 min with jitter (demo/extres_demo/kwok-stages.yaml); the
app served by gunicorn as in the container. The cluster is a cached snapshot of real-sized pods
that the controllers leave as they are (bench/snapshot.py). The app has a core of its own (CPU 1,
as its container would have one), beside the bench's timing client (a browser); the control plane
and the bench's other clients share the other. Then, for each rate N (pod events a second,
``--rates``), for ``--seconds``:
  * a Job-like stream: bound pods created at N/4 a second, run by kwok, after 3 s marked
    Succeeded (the bench writes the phase, as their kubelet would) and deleted (four pod events
    each), sent by a pool of clients;
  * a Deployment scaled between 10 and 40 replicas every 20 s; 6 pending pods of three shapes;
  * a marker: every 2 s one node's extended capacity is patched, and the time until the overview
    and /metrics show it is the event-to-screen lag;
  * meanwhile the overview page and its fragment are timed, and the app's CPU (its processes'
    utime + stime from /proc, as % of one core) and RSS are sampled.
Prints, per rate: the rate sent, app CPU %, RSS, lag p50/p95/max (overview, /metrics), how the
median lag moved from the first half of the run to the second ("growth": the second half's over
the first's, lags under 0.1 s counted as 0.1 s, as the lag is read every ~50 ms), page and
fragment p95;
then the highest rate sustained (sent as asked, lag p95 under 1 s and not growing). Absolute
figures are this machine's.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import shutil
import statistics
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from bench import snapshot, tools  # noqa: E402
from bench.cache_bench import RESOURCES, seed_pending  # noqa: E402
from bench.envelope import settle  # noqa: E402
from tests.serving import Server  # noqa: E402

MARKER = "n00000"
PENDING = 6  # two of each shape
RESOLUTION = 0.1  # seconds: lags below this count as this when comparing the halves of a run
D = RESOURCES[0]


def pin(pids: list[int], cpus: set[int]) -> None:
    """Every thread of these processes on these CPUs (threads they start later inherit it)."""
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(task.name), cpus)


def on_load_cpu() -> None:
    """The calling thread (and the threads it starts) on CPU 0, with the control plane."""
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})


def fetch(url: str) -> tuple[str, float]:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=10) as resp:
        body = resp.read().decode()
    return body, time.perf_counter() - t


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


class Churn:
    def __init__(self, api: client.ApiClient, nodes: int, rate: float) -> None:
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.nodes, self.rate = nodes, rate
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.made = 0

    def jobs(self) -> None:
        """Bound pods at rate/4 a second: created, Running (kwok), after 3 s Succeeded (the bench
        writes the phase, as their kubelet would) and deleted; sent by a pool of clients so that one
        slow request does not hold the stream back."""
        interval, j = 4.0 / self.rate, 0
        live: collections.deque[tuple[float, str]] = collections.deque()
        on_load_cpu()
        next_at = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            while not self.stop.is_set():
                name = f"churn-{j:07d}"
                node = f"n{(j * 7919) % self.nodes:05d}"
                pool.submit(self._create, name, node)
                live.append((time.monotonic(), name))
                while live and time.monotonic() - live[0][0] > 3:
                    pool.submit(self._finish, live.popleft()[1])
                j += 1
                next_at += interval
                self.stop.wait(max(0.0, next_at - time.monotonic()))
            while live:
                pool.submit(self._finish, live.popleft()[1])

    def _create(self, name: str, node: str) -> None:
        body: Any = {
            "metadata": {"name": name, "labels": {"app": "churn"}},
            "spec": {
                "nodeName": node,
                "containers": [
                    {"name": "c", "image": "registry.example/job:1", "resources": {"limits": {D: "1"}}}
                ],
            },
        }
        with contextlib.suppress(client.ApiException):
            self.core.create_namespaced_pod("default", body, _preload_content=False)
            with self.lock:
                self.made += 1

    def _finish(self, name: str) -> None:
        with contextlib.suppress(client.ApiException):
            self.core.patch_namespaced_pod_status(
                name, "default", {"status": {"phase": "Succeeded"}}, _preload_content=False
            )
            self.core.delete_namespaced_pod(name, "default", grace_period_seconds=0, _preload_content=False)

    def deployment(self) -> None:
        labels = {"app": "churn-deploy"}
        spec = {
            "replicas": 10,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "registry.example/web:1", "resources": {"limits": {D: "1"}}}
                    ]
                },
            },
        }
        body: Any = {"metadata": {"name": "churn-deploy"}, "spec": spec}
        on_load_cpu()
        with contextlib.suppress(client.ApiException):  # made by an earlier rate's run
            self.apps.create_namespaced_deployment("default", body)
        up = True
        while not self.stop.wait(20):
            self.apps.patch_namespaced_deployment_scale(
                "churn-deploy", "default", {"spec": {"replicas": 40 if up else 10}}
            )
            up = not up


def measure(server: Server, api: client.ApiClient, nodes: int, rate: float, seconds: float) -> dict[str, Any]:
    churn = Churn(api, nodes, rate)
    core = client.CoreV1Api(api)
    threads = [
        threading.Thread(target=churn.jobs, daemon=True),
        threading.Thread(target=churn.deployment, daemon=True),
    ]
    for worker in threads:
        worker.start()
    lags: dict[str, list[tuple[float, float]]] = {"overview": [], "metrics": []}
    page, fragment = [], []
    cpu0 = tools.group_usage(server.proc.pid)[0]
    t0 = time.monotonic()
    rss: list[int] = []
    value = 1000
    escaped = D.replace("/", "~1")
    while time.monotonic() - t0 < seconds:
        value += 1
        core.patch_node_status(
            MARKER, [{"op": "replace", "path": f"/status/capacity/{escaped}", "value": str(value)}]
        )
        wrote = time.monotonic()
        seen = {"overview": False, "metrics": False}
        want_cell = f'data-field="capacity">{value}<'
        want_metric = f'extres_node_extended_resource_capacity{{node="{MARKER}",resource="{D}"}} {value}.0'
        while not all(seen.values()) and time.monotonic() - wrote < 30:
            if not seen["overview"]:
                body, took = fetch(f"{server.url}/?q={MARKER}")
                page.append(took)
                if want_cell in body:
                    seen["overview"] = True
                    lags["overview"].append((wrote - t0, time.monotonic() - wrote))
            if not seen["metrics"]:
                body, _ = fetch(server.metrics_url)
                if want_metric in body:
                    seen["metrics"] = True
                    lags["metrics"].append((wrote - t0, time.monotonic() - wrote))
            time.sleep(0.05)
        req = urllib.request.Request(
            f"{server.url}/?page=1", headers={"HX-Request": "true", "HX-Target": "grid"}
        )
        t = time.perf_counter()
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
        fragment.append(time.perf_counter() - t)
        rss.append(tools.group_usage(server.proc.pid)[1])
        time.sleep(max(0.0, 2.0 - (time.monotonic() - wrote)))
    elapsed = time.monotonic() - t0
    cpu1 = tools.group_usage(server.proc.pid)[0]
    churn.stop.set()
    for worker in threads:
        worker.join(timeout=30)
    half = seconds / 2
    out: dict[str, Any] = {
        "rate": rate,
        "cpu": 100 * (cpu1 - cpu0) / elapsed,
        "rss": max(rss) / 2**20 if rss else 0.0,
        "page_p95": pct(page, 0.95) * 1000,
        "fragment_p95": pct(fragment, 0.95) * 1000,
        "pods_made": churn.made,
        "achieved": 4 * churn.made / elapsed,  # the stream's pod events a second, as sent
    }
    for kind, found in lags.items():
        values = [lag for _, lag in found]
        early = [lag for at, lag in found if at < half]
        late = [lag for at, lag in found if at >= half]
        out[kind] = (pct(values, 0.5), pct(values, 0.95), max(values) if values else float("nan"))
        # the lag is read every ~50 ms: below RESOLUTION a ratio of medians is noise, not growth
        out[f"{kind}_growth"] = (
            (statistics.median(late) / max(statistics.median(early), RESOLUTION))
            if early and late
            else float("nan")
        )
    return out


def held(m: dict[str, Any]) -> bool:
    """Whether a rate was sustained: sent as asked, the lag short and not growing."""
    return (
        m["achieved"] >= 0.9 * m["rate"]
        and m["overview"][1] < 1
        and m["metrics"][1] < 1
        and m["overview_growth"] <= 1.5
        and m["metrics_growth"] <= 1.5
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=10000)
    p.add_argument("--rates", default="20")
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    if a.quick:
        a.nodes, a.pods, a.rates, a.seconds = 300, 1000, "10", 60
    split = (os.cpu_count() or 1) >= 2
    if split:
        os.sched_setaffinity(0, {0})  # the bench's own clients and everything they start: CPU 0
    plane, restored = snapshot.restore(a.nodes, a.pods)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        core = client.CoreV1Api(api)
        settled = settle(core, a.nodes, a.pods)
        seed_pending(
            core, a.nodes, PENDING, condition=False
        )  # three shapes; none fits (kube-scheduler says why)
        print(
            f"{a.nodes} nodes and {a.pods} real-sized pods from a snapshot (bench/snapshot.py): copied and "
            f"control plane up in {restored:.0f}s, settled in {settled:.0f}s",
            flush=True,
        )
        server = Server(plane, EXTRES_HISTORY_STORE="off")
        if split:  # the app a core of its own, as its container would have; the rest the other
            pin([int(f.read_text()) for f in plane.state_dir.glob("*.pid")], {0})
            pin([server.proc.pid, *tools.children(server.proc.pid)], {1})
            os.sched_setaffinity(0, {1})  # this thread times the pages; the load's threads move to CPU 0
        try:
            fetch(server.url + "/")  # the cache syncs on the first request
            time.sleep(10)
            print(
                f"{'events/s':>8} {'sent/s':>6} {'app CPU %':>9} {'RSS MiB':>8} "
                f"{'lag overview p50/p95/max s':>27} "
                f"{'lag /metrics p50/p95/max s':>27} {'growth':>7} {'page p95 ms':>11} "
                f"{'fragment p95 ms':>15}"
            )
            sustained = 0.0
            for rate in (float(r) for r in a.rates.split(",")):
                m = measure(server, api, a.nodes, rate, a.seconds)
                if held(m):
                    sustained = max(sustained, rate)
                o, mt = m["overview"], m["metrics"]
                print(
                    f"{rate:8.0f} {m['achieved']:6.1f} "
                    f"{m['cpu']:9.1f} {m['rss']:8.0f} {o[0]:9.2f} {o[1]:8.2f} {o[2]:8.2f} "
                    f"{mt[0]:9.2f} {mt[1]:8.2f} {mt[2]:8.2f} {m['overview_growth']:7.2f} "
                    f"{m['page_p95']:11.1f} {m['fragment_p95']:15.1f}",
                    flush=True,
                )
            print(
                f"highest rate sustained: {sustained:.0f} pod events/s (sent at >= 90% of the rate asked, "
                "lag p95 < 1 s on the overview and /metrics, second half's median lag <= 1.5x the first's)"
            )
        finally:
            server.stop()
    finally:
        plane.stop()
        shutil.rmtree(plane.state_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
