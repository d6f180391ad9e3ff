"""A cluster of real-sized pods that the full control plane leaves as it is, seeded once and kept
as an etcd data directory outside the repository, keyed by profile, version, size and recipe.

    python bench/snapshot.py --nodes 5000 --pods 150000     # build (once) and print where it is

Seeding 150,000 pods through the API server runs at ~50 pods a second on 2 cores (a create and a
status patch each). So the API server makes one pod of each workload (created, its status patched
as a kubelet would, managedFields and all), and the rest are copies of it, each with its own name,
uid, node, ordinal and IPs, written into etcd directly as the API server stores them (JSON, which
it reads as it reads its own protobuf). Nothing but the seeding goes around the API server:
everything measured reads the cluster through it.

The owners match their pods, so that the controllers have nothing to do when the full control
plane starts on the snapshot: a ReplicaSet's replicas is its pod count; a StatefulSet
(OnDelete, Parallel) has pods named by ordinal with their identity labels; a Job runs as many pods
in parallel as it has running pods, and its pods carry the annotation that tells this project's
kwok stages to keep them running (a long batch job); one Job pod in ten has Succeeded. No
volumeClaimTemplates: the StatefulSet's pods still name their claim, as made from one.

Restoring copies the directory (seconds) and starts the control plane on it with kwok as every
node's kubelet.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from app.kube.api.client import ClusterConfig, api_client, load_configuration  # noqa: E402
from bench.cache_bench import RESOURCES, seed_nodes  # noqa: E402
from bench.profiles import RealProfile  # noqa: E402
from extres_demo import testenv  # noqa: E402

RECIPE = "r2"  # bump when what a snapshot holds changes
APPS = 30
NAMESPACE = "default"
KEEP_RUNNING = "extres.test/keep-running"
# The control plane's Go processes collect garbage before their heaps pass this (GOMEMLIMIT, as
# operators set it): without it, kube-apiserver alone reached 13.9 GB at 150,000 pods, with its
# heap free to grow to twice what it holds, and was killed for memory on this 24 GiB machine.
GO_MEMORY = {"GOMEMLIMIT": "7GiB"}
# kube-apiserver alone (``bare``): at 150,000 pods it holds ~7 GB, and a limit at that thrashes
GO_MEMORY_BARE = {"GOMEMLIMIT": "14GiB"}
CACHE = Path(os.environ.get("EXTRES_CACHE_DIR", Path.home() / ".cache" / "extres")) / "snapshots"


def key(nodes: int, pods: int, version: str) -> str:
    return f"real-v{version}-{nodes}n-{pods}p-{RECIPE}"


def app_of(j: int) -> tuple[int, int]:
    """Pod j belongs to app j % APPS, as its k-th pod."""
    return j % APPS, j // APPS


def succeeded(kind: str, k: int) -> bool:
    return kind == "Job" and k % 10 == 9


class Seed(RealProfile):
    """RealProfile's pods, named and labelled as their owners' controllers would name them."""

    def __init__(self, api: client.ApiClient, counts: dict[int, int]) -> None:
        super().__init__(api, NAMESPACE, APPS)
        self.counts = counts

    def size_owner(self, a: int, kind: str, body: dict[str, Any]) -> None:
        """Size the owner to its pods before it is created (no controller runs while seeding)."""
        count = self.counts.get(a, 0)
        spec = body["spec"]
        if kind == "ReplicaSet":
            spec["replicas"] = count
        elif kind == "StatefulSet":
            spec.update(replicas=count, podManagementPolicy="Parallel", updateStrategy={"type": "OnDelete"})
            spec.pop("volumeClaimTemplates", None)
        else:
            running = sum(1 for k in range(count) if not succeeded(kind, k))
            spec.update(suspend=False, parallelism=running)
            spec.pop("completions", None)

    def pod(self, a: int, k: int, j: int, node: str) -> dict[str, Any]:
        owner = self.owner(a, RESOURCES[a % 3])
        body = self.body(j, node, RESOURCES[a % 3])
        meta, spec = body["metadata"], body["spec"]
        if owner["kind"] == "StatefulSet":
            name = f"{owner['ref']['name']}-{k}"
            meta.pop("generateName")
            meta["name"] = name
            meta["labels"] = {
                **meta["labels"],
                "statefulset.kubernetes.io/pod-name": name,
                "apps.kubernetes.io/pod-index": str(k),
            }
            spec["hostname"] = name
            for v in spec["volumes"]:
                if "persistentVolumeClaim" in v:
                    v["persistentVolumeClaim"]["claimName"] = f"data-{name}"
        elif owner["kind"] == "Job":
            meta["annotations"] = {**meta["annotations"], KEEP_RUNNING: "true"}
        return body


def _finish(status: dict[str, Any]) -> None:
    """A pod's status once it has Succeeded (what the kubelet reports)."""
    status["phase"] = "Succeeded"
    for c in status.get("containerStatuses", []):
        c.update(ready=False, started=False)
        c["state"] = {
            "terminated": {
                "exitCode": 0,
                "reason": "Completed",
                "startedAt": c["state"].get("running", {}).get("startedAt"),
                "finishedAt": "2026-11-20T08:30:00Z",
            }
        }
    for cond in status.get("conditions", []):
        if cond["type"] in ("Ready", "ContainersReady"):
            cond.update(status="False", reason="PodCompleted")


def _stored(made: dict[str, Any], body: dict[str, Any], j: int, node: str, seed: Seed) -> dict[str, Any]:
    """Pod j as the API server would store it: the API-made pod of its app, with j's own fields."""
    pod = copy.deepcopy(made)
    meta = pod["metadata"]
    meta.pop("resourceVersion", None)
    meta["name"] = body["metadata"]["name"]
    meta["uid"] = str(uuid.UUID(int=uuid.uuid4().int))
    meta["labels"] = body["metadata"]["labels"]
    meta["annotations"] = body["metadata"]["annotations"]
    if "generateName" not in body["metadata"]:
        meta.pop("generateName", None)
    for field in ("nodeName", "hostname", "volumes"):
        if field in body["spec"]:
            pod["spec"][field] = body["spec"][field]
    status = pod["status"]
    own = seed.status(j, node)["status"]
    for field in ("podIP", "podIPs", "hostIP"):
        status[field] = own[field]
    if "hostIPs" in status:
        status["hostIPs"] = [{"ip": own["hostIP"]}]
    for mine, theirs in zip(status.get("containerStatuses", []), own["containerStatuses"], strict=False):
        mine["containerID"] = theirs["containerID"]
    return pod


class Etcd:
    """Puts through etcd's gRPC gateway, batched in transactions under its request limits."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/v3/kv/txn"
        self.ops: list[dict[str, Any]] = []
        self.size = 0

    def put(self, key: str, value: bytes) -> None:
        if len(self.ops) >= 100 or self.size + len(value) > 1_000_000:
            self.flush()
        self.ops.append(
            {
                "requestPut": {
                    "key": base64.b64encode(key.encode()).decode(),
                    "value": base64.b64encode(value).decode(),
                }
            }
        )
        self.size += len(value)

    def flush(self) -> None:
        if not self.ops:
            return
        data = json.dumps({"success": self.ops}).encode()
        req = urllib.request.Request(self.url, data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            answer = json.loads(resp.read())
        if not answer.get("succeeded", True) or "error" in answer:
            raise RuntimeError(f"etcd refused a transaction: {str(answer)[:300]}")
        self.ops, self.size = [], 0


def _pods(nodes: int, pods: int) -> Iterator[tuple[int, int, int, str]]:
    for j in range(pods):
        a, k = app_of(j)
        yield a, k, j, f"n{j % nodes:05d}"


def build(nodes: int, pods: int, version: str, target: Path) -> None:
    state = Path(tempfile.mkdtemp(prefix="extres-snapshot-"))
    plane = testenv.start(state, bare=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        api.configuration.connection_pool_maxsize = 32
        core = client.CoreV1Api(api)
        t = time.perf_counter()
        seed_nodes(core, nodes)
        print(f"snapshot: {nodes} nodes in {time.perf_counter() - t:.0f}s", flush=True)
        counts: dict[int, int] = {}
        for a, _, _, _ in _pods(nodes, pods):
            counts[a] = counts.get(a, 0) + 1
        seed = Seed(api, counts)
        # the first pod of each app through the API server: what it stores for such a pod
        made: dict[int, dict[str, Any]] = {}
        for a, k, j, node in _pods(nodes, min(pods, APPS)):
            body: Any = seed.pod(a, k, j, node)
            core.create_namespaced_pod(NAMESPACE, body, _preload_content=False)
            core.patch_namespaced_pod_status(
                body["metadata"]["name"], NAMESPACE, seed.status(j, node), _preload_content=False
            )
            got: Any = core.read_namespaced_pod(body["metadata"]["name"], NAMESPACE, _preload_content=False)
            made[a] = json.loads(got.data)
        plane.down("apiserver")
        t = time.perf_counter()
        etcd = Etcd(plane.port + 10000)
        written = 0
        for a, k, j, node in _pods(nodes, pods):
            owner = seed.owner(a, RESOURCES[a % 3])
            if j < APPS:
                continue  # made through the API server above
            body = seed.pod(a, k, j, node)
            pod = _stored(made[a], body, j, node, seed)
            if succeeded(owner["kind"], k):
                _finish(pod["status"])
            etcd.put(f"/registry/pods/{NAMESPACE}/{pod['metadata']['name']}", json.dumps(pod).encode())
            written += 1
            if written % 20000 == 0:
                print(f"snapshot: {written} pods written to etcd", flush=True)
        etcd.flush()
        print(f"snapshot: {written} pods written to etcd in {time.perf_counter() - t:.0f}s", flush=True)
    finally:
        plane.stop()
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (state / "etcd-data").rename(tmp / "etcd-data")
    (tmp / "version").write_text(version)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    shutil.rmtree(state, ignore_errors=True)


def ensure(nodes: int, pods: int) -> Path:
    """The snapshot's folder, built first if it is not cached."""
    version = testenv.version()
    target = CACHE / key(nodes, pods, version)
    if not (target / "etcd-data").is_dir():
        print(f"snapshot: building {target.name} (cached in {target.parent})", flush=True)
        t = time.perf_counter()
        build(nodes, pods, version, target)
        print(f"snapshot: built in {time.perf_counter() - t:.0f}s", flush=True)
    return target


def restore(
    nodes: int, pods: int, scheduler: bool = True, bare: bool = False
) -> tuple[testenv.ControlPlane, float]:
    """A control plane started on a copy of the snapshot; the seconds the copy and start took."""
    source = ensure(nodes, pods)
    state = Path(tempfile.mkdtemp(prefix="extres-envelope-"))
    t = time.perf_counter()
    subprocess.run(
        ["cp", "-a", "--reflink=auto", str(source / "etcd-data"), str(state / "etcd-data")], check=True
    )
    plane = testenv.start(
        state, scheduler=scheduler and not bare, bare=bare, env=GO_MEMORY_BARE if bare else GO_MEMORY
    )
    return plane, time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=150000)
    a = p.parse_args()
    print(ensure(a.nodes, a.pods))


if __name__ == "__main__":
    main()
