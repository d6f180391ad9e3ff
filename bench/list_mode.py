"""Pages or streamed: what the cache's cold list costs kube-apiserver on a busy control plane.

    python bench/list_mode.py                          # 5,000 nodes, 10,000 pods, 20 pod events/s
    python bench/list_mode.py --pods 50000 --rounds 3

The full control plane on bench/snapshot.py's cached snapshot of real-sized pods (kwok as every
node's kubelet), kept busy by bench/churn.py's job stream (bound pods created, run, finished and
deleted at ``--rate`` pod events a second: the watch cache moves while the lists are read).
Then, alternating the modes ``--rounds`` times, the cache's own cold sync of nodes then pods
in a fresh process (bench/sync_probe.py ``sync``, streamed or ``--pages``), and meanwhile
kube-apiserver's CPU (utime + stime from /proc) and its peak RSS (VmHWM, reset before each
list: /proc/PID/clear_refs); the list's own share of the CPU is what it used over the list less
what the churn alone uses at its rate, read over the 10 s before each list. Prints per mode the
medians: the client's seconds, kube-apiserver's CPU seconds over the list, the churn's share
of them and the list's own, and its peak RSS above where it stood. Ratios are the claim;
seconds and MiB are this machine's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes import client

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from bench import snapshot, tools
from bench.cache_bench import probe
from bench.churn import Churn
from bench.envelope import settle
from extres_demo import testenv

MIB = 2**20
TICK = os.sysconf("SC_CLK_TCK")


class Apiserver:
    """kube-apiserver's CPU seconds and memory, read from /proc."""

    def __init__(self, plane: testenv.ControlPlane) -> None:
        self.pid = (plane.state_dir / "apiserver.pid").read_text().strip()

    def cpu(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime

    def memory(self) -> tuple[float, float]:
        """(RSS, peak RSS since the last reset) in MiB."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        kb = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if "kB" in line}
        return kb["VmRSS"] * 1024 / MIB, kb["VmHWM"] * 1024 / MIB

    def reset_peak(self) -> None:
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS


BASELINE = 10.0  # seconds of churn alone read before each list


def one(plane: testenv.ControlPlane, server: Apiserver, mode: str) -> dict[str, float]:
    """The churn's CPU rate over BASELINE seconds, then one cold sync in ``mode`` (pages or stream)."""
    cpu, t = server.cpu(), time.perf_counter()
    time.sleep(BASELINE)
    rate = (server.cpu() - cpu) / (time.perf_counter() - t)
    server.reset_peak()
    before_rss, _ = server.memory()
    cpu = server.cpu()
    t = time.perf_counter()
    result = probe(plane.kubeconfig, "sync", *(("--pages",) if mode == "pages" else ()))
    span = time.perf_counter() - t
    listing_cpu = server.cpu() - cpu
    _, peak = server.memory()
    alone = rate * span
    return {
        "seconds": result["seconds"],
        "span": span,
        "cpu": listing_cpu,
        "alone": alone,
        "peak": peak - before_rss,
        "pods": result["pods"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=10000)
    p.add_argument("--rate", type=float, default=20.0, help="pod events a second while the lists run")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    tools.header("list_mode.py")
    plane, restored = snapshot.restore(a.nodes, a.pods)
    churn: Churn | None = None
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        settled = settle(client.CoreV1Api(api), a.nodes, a.pods)
        server = Apiserver(plane)
        rss, _ = server.memory()
        print(
            f"{a.nodes} nodes, {a.pods} real-sized pods; control plane up in {restored:.0f}s, settled in "
            f"{settled:.0f}s; kube-apiserver RSS {rss:.0f} MiB; churn {a.rate:g} pod events/s",
            flush=True,
        )
        churn = Churn(api, a.nodes, a.rate)
        threading.Thread(target=churn.jobs, daemon=True).start()
        time.sleep(10)  # the churn under way
        runs: dict[str, list[dict[str, float]]] = {"pages": [], "stream": []}
        for _ in range(a.rounds):
            for mode in runs:
                runs[mode].append(one(plane, server, mode))
        report(runs)
    finally:
        if churn is not None:
            churn.stop.set()
        plane.stop()
        shutil.rmtree(plane.state_dir, ignore_errors=True)


def report(runs: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    def median(mode: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[mode])

    print(
        f"{'mode':8} {'client s':>9} {'apiserver CPU s':>16} {'churn share':>12} {'list share':>11} "
        f"{'peak +MiB':>10}  (medians of {len(runs['pages'])})"
    )
    shares = {}
    for mode in runs:
        share = statistics.median(r["cpu"] - r["alone"] for r in runs[mode])
        shares[mode] = share
        print(
            f"{mode:8} {median(mode, 'seconds'):9.2f} {median(mode, 'cpu'):16.2f} "
            f"{median(mode, 'alone'):12.2f} {share:11.2f} {median(mode, 'peak'):10.0f}"
        )
    pages, stream = runs["pages"], runs["stream"]
    print(
        f"stream / pages: client {median('stream', 'seconds') / median('pages', 'seconds'):.2f}x, "
        f"apiserver CPU for the list {shares['stream']:.2f} s vs {shares['pages']:.2f} s, "
        f"peak {median('stream', 'peak') / max(median('pages', 'peak'), 1):.2f}x "
        f"({pages[0]['pods']:.0f} and {stream[0]['pods']:.0f} live pods listed)"
    )
    return shares


if __name__ == "__main__":
    main()
