"""extres beside the tools people use instead, on the same cluster in the same run.

    python bench/side_by_side.py                   # 5,000 nodes; 10,000 real-sized pods
    python bench/side_by_side.py --steps 10000,50000
    python bench/side_by_side.py --quick           # 300 nodes; 2,000 pods

A control plane of its own (etcd and kube-apiserver; the pods are written with the status a
kubelet would give them, bench/profiles.py), 5,000 nodes and real-sized pods. At each step, wall
time and peak RSS (GNU time's maximum resident set) of:
  * kubectl-view-allocations (crates.io, pinned ``KVA_VERSION``, built once with
    ``cargo install --locked`` into ~/.cache/extres/kva-<version>);
  * ``kubectl describe nodes`` and ``kubectl get pods -A -o json`` (the kubectl of the same
    Kubernetes version as the API server);
  * extres's cold sync (bench/sync_probe.py: a fresh process, its RSS growth) and a warm page
    (the overview, memoised, once the cache is synced).
Ratios against extres's cold sync are printed; the absolute figures are this machine's. Then a
sample of nodes: each extended resource's requested amount as the three tools give it, which
must agree (the bench exits non-zero if not).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app import create_app  # noqa: E402
from app.kube.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from bench.cache_bench import RESOURCES, seed_nodes, seed_pods  # noqa: E402
from bench.profiles import RealProfile  # noqa: E402
from extres_demo import testenv  # noqa: E402

KVA_VERSION = "3.1.0"
CACHE = Path(os.environ.get("EXTRES_CACHE", Path.home() / ".cache" / "extres"))


def kva() -> Path:
    """kubectl-view-allocations, built once per version outside the repository."""
    root = CACHE / f"kva-{KVA_VERSION}"
    binary = root / "bin" / "kubectl-view-allocations"
    if not binary.exists():
        print(f"building kubectl-view-allocations {KVA_VERSION} (cargo install, a few minutes)", flush=True)
        subprocess.run(
            [
                "cargo",
                "install",
                "kubectl-view-allocations",
                "--version",
                KVA_VERSION,
                "--locked",
                "--root",
                root,
            ],
            check=True,
        )
    return binary


def kubectl() -> Path:
    found = sorted(CACHE.glob("kube-v*/kubectl"))
    if not found:
        raise SystemExit("no kubectl in the cache: scripts/dev setup builds it")
    return found[-1]


def measured(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MiB, stdout) of one command, by GNU time."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "time"
        t = time.perf_counter()
        result = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", str(report), *cmd],
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            check=True,
        )
        wall = time.perf_counter() - t
        peak_kb = float(report.read_text().strip().splitlines()[-1])
    return wall, peak_kb / 1024, result.stdout


def kva_requested(text: str) -> dict[tuple[str, str], int]:
    """(node, resource) -> requested, from kubectl-view-allocations' CSV (grouped by resource, node)."""
    out = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row.get("resource") in RESOURCES and row.get("node"):
            out[(row["node"], row["resource"])] = int(
                float(row.get("Requested") or row.get("requested") or 0)
            )
    return out


def describe_requested(text: str) -> dict[tuple[str, str], int]:
    """(node, resource) -> requested, from the "Allocated resources" table of kubectl describe."""
    out, node = {}, ""
    for line in text.splitlines():
        if line.startswith("Name:"):
            node = line.split()[1]
        for r in RESOURCES:
            m = re.match(rf"\s+{re.escape(r)}\s+(\d+)\s+\d+", line)
            if m and node:
                out[(node, r)] = int(m.group(1))
    return out


def run(nodes: int, steps: list[int]) -> int:
    state = Path(tempfile.mkdtemp(prefix="extres-side-"))
    plane = testenv.start(state, bare=True)
    failures = 0
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        core = client.CoreV1Api(api)
        seed_nodes(core, nodes)
        profile = RealProfile(api)
        seeded, binary, kctl = 0, kva(), kubectl()
        env = {"KUBECONFIG": str(plane.kubeconfig)}
        for pods in steps:
            took = seed_pods(profile, nodes, seeded, pods)
            print(
                f"\n== {nodes} nodes, {pods} real-sized pods (seeded {pods - seeded} in {took:.0f}s)",
                flush=True,
            )
            seeded = pods
            rows: list[tuple[str, float, float]] = []
            k_wall, k_rss, k_out = measured([str(binary), "-g", "resource,node", "-o", "csv"], env)
            rows.append((f"kubectl-view-allocations {KVA_VERSION}", k_wall, k_rss))
            d_wall, d_rss, d_out = measured([str(kctl), "describe", "nodes"], env)
            rows.append(("kubectl describe nodes", d_wall, d_rss))
            g_wall, g_rss, _ = measured([str(kctl), "get", "pods", "-A", "-o", "json"], env)
            rows.append(("kubectl get pods -A -o json", g_wall, g_rss))
            # extres's cold sync as a process of its own, like the others: start, list, hold
            probe_cmd = [sys.executable, str(ROOT / "bench" / "sync_probe.py"), str(plane.kubeconfig), "sync"]
            s_wall, s_rss, s_out = min((measured(probe_cmd) for _ in range(2)), key=lambda m: m[0])
            listing = json.loads(s_out.strip().splitlines()[-1])["seconds"]
            app = create_app(
                {"kubeconfig": str(plane.kubeconfig), "in_cluster": "false", "history_store": "off"}
            )
            cluster = app.extensions["extres"].cluster
            assert cluster.cache.wait_synced(600)
            web = app.test_client()
            web.get("/", base_url="https://localhost")
            t = time.perf_counter()
            for _ in range(20):
                web.get("/", base_url="https://localhost")
            warm = (time.perf_counter() - t) / 20
            rows.append(("extres cold sync (a process)", s_wall, s_rss))
            print(
                f"{'tool':34} {'wall s':>8} {'peak RSS MiB':>13} {'wall / extres':>14} {'RSS / extres':>13}"
            )
            for name, wall, rss in rows:
                print(f"{name:34} {wall:8.2f} {rss:13.0f} {wall / s_wall:14.2f} {rss / s_rss:13.2f}")
            print(
                f"  (of extres's {s_wall:.2f}s, {listing:.2f}s listing and holding; the rest starting Python)"
            )
            print(f"{'extres overview page, warm':34} {warm:8.4f} {'':13} {warm / s_wall:14.4f}")
            # the same numbers from each tool, for a sample of nodes
            theirs, described = kva_requested(k_out), describe_requested(d_out)
            store = cluster.store
            sample = [f"n{i:05d}" for i in range(0, nodes, max(1, nodes // 7))][:7]
            for node in sample:
                mine = store.requested_on(node)
                for r in RESOURCES:
                    found = (mine.get(r, 0), theirs.get((node, r), 0), described.get((node, r), 0))
                    if len(set(found)) != 1:
                        failures += 1
                        print(f"DISAGREE {node} {r}: extres, kubectl-view-allocations, describe = {found}")
            print(f"agreement on {len(sample)} nodes x {len(RESOURCES)} resources: {failures} disagreements")
            if failures:
                shown = k_out.splitlines()[:6] + [line for line in k_out.splitlines() if sample[0] in line]
                print("kubectl-view-allocations said, for", sample[0], *shown[:8], sep="\n  ")
            app.extensions["extres"].close()
    finally:
        plane.stop()
    return 1 if failures else 0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--steps", default="10000")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    nodes, steps = (300, [2000]) if a.quick else (a.nodes, [int(s) for s in a.steps.split(",")])
    sys.exit(run(nodes, steps))


if __name__ == "__main__":
    main()
