"""The benchmark's seeded cluster (bench/snapshot.py) on the full control plane.

A guard for the mechanism the envelope and churn figures stand on: the pods copied into etcd read
back through the API server as it made their siblings, and the controllers (ReplicaSet,
StatefulSet, Job, garbage collector) and kwok leave every pod as it was seeded. Seeded owners
whose replicas did not match their pods once had the controllers delete most of them.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from bench import snapshot
from bench.envelope import settle

pytestmark = pytest.mark.kube

NODES, PODS = 3, 300


def paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (lists by their first item)."""
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in {prefix + "." + k} | paths(v, prefix + "." + k)}
    if isinstance(value, list) and value:
        return paths(value[0], prefix + "[]")
    return set()


def test_the_seeded_pods_read_back_as_made_and_the_controllers_leave_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "CACHE", tmp_path / "snapshots")
    plane, _ = snapshot.restore(NODES, PODS)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        core = client.CoreV1Api(api)
        settle(core, NODES, PODS, timeout=120)

        def pods() -> list[dict[str, Any]]:
            answer: Any = core.list_namespaced_pod(snapshot.NAMESPACE, _preload_content=False)
            return list(json.loads(answer.data)["items"])

        seeded = pods()
        kinds = Counter((p["metadata"]["ownerReferences"][0]["kind"], p["status"]["phase"]) for p in seeded)
        # 30 apps of 10 pods; a Job's tenth pod has Succeeded
        assert kinds == {
            ("ReplicaSet", "Running"): 100,
            ("StatefulSet", "Running"): 100,
            ("Job", "Running"): 90,
            ("Job", "Succeeded"): 10,
        }
        app0 = [p for p in seeded if p["metadata"]["labels"]["app.kubernetes.io/name"] == "app-000"]
        # pod 0 of each app was made through the API server; the rest are copies written to etcd
        [made] = [p for p in app0 if p["metadata"]["name"].endswith("-000000")]
        copied = next(p for p in app0 if p is not made)
        assert paths(copied) == paths(made)  # the same fields as the pod the API server made
        assert copied["metadata"]["uid"] != made["metadata"]["uid"]
        assert len({p["metadata"]["uid"] for p in seeded}) == PODS
        assert len({p["status"]["podIP"] for p in seeded}) == PODS
        statefulset = [p for p in seeded if p["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"]
        assert all(p["metadata"]["name"] == p["spec"]["hostname"] for p in statefulset)

        time.sleep(20)  # the controllers' first syncs and kwok's stages have run by now
        later = pods()
        assert {p["metadata"]["uid"]: p["status"]["phase"] for p in later} == {
            p["metadata"]["uid"]: p["status"]["phase"] for p in seeded
        }
        assert not [p["metadata"]["name"] for p in later if p["metadata"].get("deletionTimestamp")]
        api.close()
    finally:
        plane.stop()
        shutil.rmtree(plane.state_dir, ignore_errors=True)
