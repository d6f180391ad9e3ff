"""Kueue's queues at size: 100 ClusterQueues and 5,000 Workloads, real-sized (each Workload as
Kueue v0.17 writes one for a batch/v1 Job: its pod template, status conditions, admission and
resource requests), read through the app's own reader into its store; then the Pending page
(its "waiting for quota" section) and the Queues page asked in turn.

    python bench/queues_bench.py [--queues 100] [--workloads 5000] [--seconds 10]

Prints the bytes of one Workload on the wire and the memory the store keeps per Workload
(tracemalloc, the views after decoding), and p50/p95 of each page beside the same pages with no
Kueue object at all (the baseline, in the same run); the target: p95 under 50 ms.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import create_app  # noqa: E402
from app.kube.wire.reading import READERS  # noqa: E402
from tests.web.fake import FakeCluster  # noqa: E402

GPU = "nvidia.com/gpu"
WAITING = (
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, "
    "2 more needed"
)


def workload(i: int, queues: int) -> dict:
    """Workload number ``i``, as Kueue writes one for a Job; every third one waits for quota."""
    admitted = i % 3 != 0
    namespace, job = f"team-{i % queues}", f"train-{i}"
    conditions = [
        {
            "type": "QuotaReserved",
            "status": "True" if admitted else "False",
            "reason": "QuotaReserved" if admitted else "Pending",
            "lastTransitionTime": "2026-12-06T10:00:00Z",
            "observedGeneration": 1,
            "message": f"Quota reserved in ClusterQueue cq-{i % queues}" if admitted else WAITING,
        },
    ]
    if admitted:
        conditions.append(
            {
                "type": "Admitted",
                "status": "True",
                "reason": "Admitted",
                "lastTransitionTime": "2026-12-06T10:00:01Z",
                "message": "The workload is admitted",
            }
        )
    container = {
        "name": "trainer",
        "image": "registry.example/ml/trainer:2026.12",
        "command": ["python", "-m", "train"],
        "args": ["--epochs", "90", "--batch-size", "256"],
        "env": [{"name": f"VAR_{k}", "value": "x" * 24} for k in range(8)],
        "resources": {"requests": {"cpu": "8", "memory": "64Gi", GPU: "4"}, "limits": {GPU: "4"}},
    }
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {
            "name": f"job-{job}-{i:05x}",
            "namespace": namespace,
            "uid": f"{i:08x}-0000-0000-0000-000000000000",
            "resourceVersion": str(1000 + i),
            "generation": 1,
            "creationTimestamp": "2026-12-06T10:00:00Z",
            "labels": {"kueue.x-k8s.io/job-uid": f"{i:08x}"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": f"{i:08x}",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "finalizers": ["kueue.x-k8s.io/resource-in-use"],
        },
        "spec": {
            "active": True,
            "queueName": f"lq-{i % queues}",
            "priority": 0,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
                }
            ],
        },
        "status": {
            "conditions": conditions,
            "resourceRequests": [{"name": "main", "resources": {"cpu": "8", "memory": "64Gi", GPU: "4"}}],
        },
    }
    if admitted:
        obj["status"]["admission"] = {
            "clusterQueue": f"cq-{i % queues}",
            "podSetAssignments": [
                {
                    "name": "main",
                    "count": 1,
                    "flavors": {"cpu": "default", "memory": "default", GPU: "h100"},
                    "resourceUsage": {"cpu": "8", "memory": "64Gi", GPU: "4"},
                }
            ],
        }
    return obj


def cluster_queue(i: int) -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": f"cq-{i}"},
        "spec": {
            "cohortName": f"cohort-{i % 10}",
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "default",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 64},
                                {"name": "memory", "nominalQuota": "512Gi"},
                            ],
                        }
                    ],
                },
                {
                    "coveredResources": [GPU],
                    "flavors": [
                        {
                            "name": "h100",
                            "resources": [{"name": GPU, "nominalQuota": 32, "borrowingLimit": 8}],
                        }
                    ],
                },
            ],
        },
        "status": {
            "pendingWorkloads": 17,
            "admittedWorkloads": 33,
            "flavorsReservation": [
                {"name": "h100", "resources": [{"name": GPU, "total": "32", "borrowed": "0"}]}
            ],
            "flavorsUsage": [{"name": "h100", "resources": [{"name": GPU, "total": "32", "borrowed": "0"}]}],
        },
    }


def timed(web, paths, seconds: float) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {p: [] for p in paths}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for path in paths:
            t0 = time.perf_counter()
            answer = web.get(path)
            out[path].append(time.perf_counter() - t0)
            assert answer.status_code == 200, (path, answer.status_code)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queues", type=int, default=100)
    ap.add_argument("--workloads", type=int, default=5000)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    print(f"command: python bench/queues_bench.py {' '.join(sys.argv[1:])}")
    cluster = FakeCluster()
    for n in range(200):
        cluster.node(f"gpu-{n:03d}", {GPU: "8"}, labels={"gpu": "h100"})
    app = create_app({"in_cluster": "false", "read_only": False}, cluster=cluster)
    app.config["TESTING"] = True
    web = app.test_client()
    paths = ["/pending/", "/queues/"]
    quiet = timed(web, paths, args.seconds / 2)

    raw = [json.dumps(workload(i, args.queues)).encode() for i in range(args.workloads)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    views = [READERS["workloads"].one(r)[0] for r in raw]
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    queues = cluster.store.queues
    queues.replace("workloads", views)
    queues.replace(
        "clusterqueues",
        [READERS["clusterqueues"].one(json.dumps(cluster_queue(i)).encode())[0] for i in range(args.queues)],
    )
    local = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue"}
    queues.replace(
        "localqueues",
        [
            READERS["localqueues"].one(
                json.dumps(
                    {
                        **local,
                        "metadata": {"name": f"lq-{i}", "namespace": f"team-{i}"},
                        "spec": {"clusterQueue": f"cq-{i}"},
                    }
                ).encode()
            )[0]
            for i in range(args.queues)
        ],
    )
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "h100"},
        "spec": {"nodeLabels": {"gpu": "h100"}},
    }
    queues.replace("resourceflavors", [READERS["resourceflavors"].one(json.dumps(flavor).encode())[0]])
    admitted = args.workloads - args.workloads // 3 - 1
    wire = statistics.mean(map(len, raw))
    print(f"{args.queues} ClusterQueues, {args.workloads} Workloads ({admitted} admitted)")
    print(f"one Workload on the wire: {wire:.0f} B; kept per Workload: {kept / args.workloads:.0f} B")
    busy = timed(web, paths, args.seconds)
    worst = 0.0
    for path in paths:
        p, b = statistics.quantiles(busy[path], n=20), statistics.quantiles(quiet[path], n=20)
        worst = max(worst, p[18])
        print(
            f"{path:10s} p50 {p[9] * 1e3:6.1f} p95 {p[18] * 1e3:6.1f} ms   "
            f"without Kueue p95 {b[18] * 1e3:6.1f} ms = {p[18] / b[18]:.2f}x"
        )
    print(f"target: p95 < 50 ms: {'met' if worst < 0.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
