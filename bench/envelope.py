"""The Kubernetes envelope: 150,000 real-sized pods on 5,000 nodes, beside 10,000 and 50,000, and
the tools people use instead, on the same cluster in the same run.

    python bench/envelope.py                                  # 5,000 nodes; 10k, 50k, 150k pods
    python bench/envelope.py --steps 10000 --requests 50      # one step, fewer page views

At each step the full control plane (etcd, kube-apiserver, kube-scheduler,
kube-controller-manager; kwok as every node's kubelet) starts on a copy of a cached etcd snapshot
(bench/snapshot.py: seeded once, keyed by profile, version and size), waits until every node is
Ready and every pod listed, adds 30 pods no node can take (kube-scheduler writes why), and measures:
  * extres's cold sync against the raw-parse floor (the same pages fetched and json.loads'ed), the
    peak RSS growth per pod, RSS after the sync and what the cache retains (bench/sync_probe.py,
    each a fresh process);
  * beside it, wall time and peak RSS of kubectl-view-allocations, ``kubectl describe nodes`` and
    ``kubectl get pods -A -o json`` (bench/tools.py; each stopped if it would leave the machine
    less than 2 GiB), and the requested amounts each gives for a sample of nodes, which must agree
    with extres's (a tool stopped for memory is not compared);
  * every page and fragment's p50/p95, memoised and right after a pod event, and the /metrics
    scrape (bench/cache_bench.py's warm_pages).
Then a table of every step. Ratios (against the floor, against extres's sync, from one step to the
next) carry to other machines; seconds, MiB and milliseconds are this machine's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from kubernetes import client  # noqa: E402

from app import create_app  # noqa: E402
from app.domain.quantity import parse_quantity  # noqa: E402
from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from app.web.process import of as process_of  # noqa: E402
from bench import snapshot, tools  # noqa: E402
from bench.cache_bench import KB, RESOURCES, measure_sync, print_sync, seed_pending, warm_pages  # noqa: E402
from bench.profiles import listed_size  # noqa: E402
from extres_demo import testenv  # noqa: E402
from tests.serving import Server  # noqa: E402

MIB = 2**20
PENDING = 30


def settle(
    core: client.CoreV1Api, nodes: int, pods: int, timeout: float = 900, kubelets: bool = True
) -> float:
    """Seconds until every node is Ready (if kwok runs: ``kubelets``) and the API server lists
    every pod."""
    t = time.perf_counter()
    while time.perf_counter() - t < timeout:
        answer: Any = core.list_node(_preload_content=False)
        listed_nodes = json.loads(answer.data)["items"]
        ready = sum(
            1
            for n in listed_nodes
            if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions", []))
        )
        listed: Any = core.list_pod_for_all_namespaces(limit=1)
        count = len(listed.items) + (listed.metadata.remaining_item_count or 0)
        if (ready == nodes or not kubelets) and count >= pods:
            return time.perf_counter() - t
        time.sleep(2)
    raise RuntimeError(f"the cluster did not settle in {timeout:.0f}s ({ready} nodes Ready, {count} pods)")


def side_by_side(plane: testenv.ControlPlane, nodes: int, label: str) -> tuple[dict[str, Any], int]:
    """The other tools beside extres's cold sync and warm page; (figures, disagreements)."""
    env = {"KUBECONFIG": str(plane.kubeconfig)}
    kctl = str(plane.kubectl)
    kva = tools.measured([str(tools.kva()), "-o", "csv"], env)
    described = tools.measured([kctl, "describe", "nodes"], env)
    dumped = tools.measured([kctl, "get", "pods", "-A", "-o", "json"], env)
    sync, listing = tools.extres_sync(plane.kubeconfig)
    app = create_app({"kubeconfig": str(plane.kubeconfig), "in_cluster": "false", "history_store": "off"})
    state = process_of(app).local
    state.start()  # as the served worker does (reading the runtime starts nothing)
    assert state.cluster.cache.wait_synced(900)
    web = app.test_client()
    web.get("/", base_url="https://localhost")
    t = time.perf_counter()
    for _ in range(20):
        web.get("/", base_url="https://localhost")
    warm = (time.perf_counter() - t) / 20
    rows = [
        (f"kubectl-view-allocations {tools.KVA_VERSION}", kva),
        ("kubectl describe nodes", described),
        ("kubectl get pods -A -o json", dumped),
        ("extres cold sync (a process)", sync),
    ]
    print(
        f"[{label}] {'tool':34} {'wall s':>8} {'peak RSS MiB':>13} {'wall / extres':>14} {'RSS / extres':>13}"
    )
    for name, run in rows:
        note = "  (stopped: the machine's memory ran short)" if run.stopped else ""
        print(
            f"[{label}] {name:34} {run.wall:8.2f} {run.peak_mib:13.0f} {run.wall / sync.wall:14.2f} "
            f"{run.peak_mib / sync.peak_mib:13.2f}{note}"
        )
    print(
        f"[{label}]   (of extres's {sync.wall:.2f}s, {listing:.2f}s listing and holding; "
        "the rest starting Python)"
    )
    print(f"[{label}] {'extres overview page, warm':34} {warm:8.4f} {'':13} {warm / sync.wall:14.4f}")
    # the same numbers from each tool, for a sample of nodes
    answers = {
        "kubectl-view-allocations": None if kva.stopped else tools.kva_requested(kva.stdout, RESOURCES),
        "kubectl describe nodes": None
        if described.stopped
        else tools.describe_requested(described.stdout, RESOURCES),
        "kubectl get pods -o json": None
        if dumped.stopped
        else tools.listed_requested(dumped.stdout, RESOURCES),
    }
    sample = [f"n{i:05d}" for i in range(0, nodes, max(1, nodes // 7))][:7]
    failures = 0
    for node in sample:
        mine = state.cluster.store.objects.requested_on(node)
        for r in RESOURCES:
            for tool, said in answers.items():
                if said is not None and said.get((node, r), 0) != mine.get(r, 0):
                    failures += 1
                    print(
                        f"[{label}] DISAGREE {node} {r}: extres {mine.get(r, 0)}, "
                        f"{tool} {said.get((node, r), 0)}"
                    )
    compared = [tool for tool, said in answers.items() if said is not None]
    total = sum(state.cluster.store.objects.requested_on(n).get(r, 0) for n in sample for r in RESOURCES)
    print(
        f"[{label}] agreement of extres with {', '.join(compared) or 'no other tool'} on {len(sample)} "
        f"nodes x {len(RESOURCES)} resources ({total} requested): {failures} disagreements"
    )
    state.close()
    figures: dict[str, Any] = dict(rows)
    figures["warm page"] = warm
    return figures, failures


def preset() -> dict[str, int]:
    """The chart's default memory request and limit (its preset for up to 5,000 nodes and 150,000
    running pods), read from helm/extres/values.yaml."""
    resources = yaml.safe_load((ROOT / "helm" / "extres" / "values.yaml").read_text())["resources"]
    return {
        "request": int(parse_quantity(resources["requests"]["memory"])),
        "limit": int(parse_quantity(resources["limits"]["memory"])),
    }


def served(plane: testenv.ControlPlane, label: str, growth: float) -> dict[str, float]:
    """The app as the container runs it (gunicorn): its RSS once synced and its worker's peak,
    against the chart's preset; ``growth``: a cold sync's peak RSS growth (bench/sync_probe.py)."""
    server = Server(plane, ready_timeout=900, EXTRES_HISTORY_STORE="off")
    try:
        time.sleep(5)
        _, rss, peak = tools.group_usage(server.proc.pid)
    finally:
        server.stop()
    # a relist builds its new state beside the old: at most the synced RSS plus a sync's growth
    relist = rss + growth
    chart = preset()
    print(
        f"[{label}] served by gunicorn: RSS once synced {rss / MIB:.0f} MiB (master and worker), the "
        f"worker's peak {peak / MIB:.0f} MiB, a relist at most ~{relist / MIB:.0f} MiB; the chart's "
        f"preset: request {chart['request'] // MIB}Mi ({'holds' if rss <= chart['request'] else 'SHORT'}), "
        f"limit {chart['limit'] // MIB}Mi ({'holds' if max(peak, relist) <= chart['limit'] else 'SHORT'})"
    )
    return {"rss": rss, "peak": peak, "relist": relist}


def step(nodes: int, pods: int, requests: int, parts: set[str], bare: bool) -> tuple[dict[str, Any], int]:
    plane, restored = snapshot.restore(nodes, pods, bare=bare)
    label = f"{pods // 1000}k" if pods >= 1000 else str(pods)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        core = client.CoreV1Api(api)
        settled = settle(core, nodes, pods, kubelets=not bare)
        seed_pending(core, nodes, PENDING, condition=bare)  # without a scheduler, its condition by hand
        size = listed_size(api)
        print(
            f"\n[{label}] {nodes} nodes, {pods} real-sized pods ({size / KB:.2f} KB of JSON each as listed); "
            f"snapshot copied and control plane up in {restored:.0f}s, settled in {settled:.0f}s",
            flush=True,
        )
        if "sync" in parts:
            sync = measure_sync(plane.kubeconfig, pods)
            print_sync(label, sync)
        tools_figures, failures = side_by_side(plane, nodes, label) if "tools" in parts else ({}, 0)
        if "sync" in parts:
            serving = served(plane, label, sync["peak_per_pod"] * sync["pods"])
        pages = warm_pages(plane.kubeconfig, nodes, requests, label) if "pages" in parts else {}
        api.close()
    finally:
        plane.stop()
        shutil.rmtree(plane.state_dir, ignore_errors=True)
    result = {"pods": pods, "tools": tools_figures, "pages": pages}
    if "sync" in parts:
        result.update(sync=sync, served=serving)
    return result, failures


def summary(results: list[dict[str, Any]]) -> None:
    print("\nsummary (per-pod and ratio columns carry to other machines; seconds, MiB and ms are this one's)")
    print(
        f"{'pods':>7} {'sync s':>7} {'/floor':>6} {'peak B/pod':>10} {'RSS after MiB':>13} "
        f"{'kept B/pod':>10} "
        f"{'overview p95':>12} {'changed p95':>11} {'fragment p95':>12} {'scrape p95':>10} "
        f"{'kva x':>6} {'describe x':>10} {'get -o json x':>13}"
    )
    for r in results:
        s, p, t = r["sync"], r["pages"], r["tools"]
        base = t["extres cold sync (a process)"].wall
        ratios = [
            t[k].wall / base for k in t if k.startswith(("kubectl-view", "kubectl describe", "kubectl get"))
        ]
        print(
            f"{s['pods']:7.0f} {s['sync']:7.1f} {s['sync'] / s['floor']:6.2f} {s['peak_per_pod']:10.0f} "
            f"{s['after'] / MIB:13.1f} {s['retained_per_pod']:10.0f} {p['overview']:12.1f} "
            f"{p['overview, changed']:11.1f} {p['fragment, changed']:12.1f} "
            f"{p['metrics scrape, changed']:10.1f} "
            f"{ratios[0]:6.2f} {ratios[1]:10.2f} {ratios[2]:13.2f}"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--steps", default="10000,50000,150000")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--parts", default="sync,tools,pages", help="what to measure at each step")
    p.add_argument(
        "--bare",
        action="store_true",
        help="etcd and kube-apiserver alone (no scheduler, controllers or kwok): what fits beside "
        "150,000 pods on a small machine",
    )
    a = p.parse_args()
    tools.header("envelope.py")
    results, failures = [], 0
    for pods in (int(s) for s in a.steps.split(",")):
        result, failed = step(a.nodes, pods, a.requests, set(a.parts.split(",")), a.bare)
        results.append(result)
        failures += failed
    if {"sync", "tools", "pages"} <= set(a.parts.split(",")):
        summary(results)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
