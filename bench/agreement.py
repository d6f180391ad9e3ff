"""Does the fit model agree with the real kube-scheduler? Random clusters and pods, seeded.

    python bench/agreement.py [--cases 2000] [--seed N]
    EXTRES_KUBE_VERSION=1.35.4 python bench/agreement.py   # the older tested version
        # each starts its own control plane, with kwok and the real kube-scheduler

Each batch creates a few nodes with random allocatable (cpu, memory, pods and two extended
resources), labels, taints and cordons, then random pods one at a time: requests (explicit
zeros too) with init containers and sidecars, pod-level resources, node selectors, required
node affinity (several terms, matchFields, Gt/Lt on non-integers, values the API server takes
but the scheduler cannot parse), tolerations (empty keys, PreferNoSchedule taints), host ports
with protocols and IPs, hostNetwork pods, bound pods resized in place (the harness writes
the kubelet's part of the status by hand: kwok does not resize), RuntimeClasses with overhead
and scheduling, a namespace whose LimitRange gives default requests, and an extended resource
DRA devices serve (a DeviceClass maps it; the harness publishes ResourceSlices on some nodes,
as a driver would, and the scheduler allocates the pods' claims), labels, required pod affinity
and anti-affinity and topology spread (bench/agreement_gen.py). The model reads each pod as the planner
reads a pasted manifest, admission applied (``app.domain.admission``). For every pod the
model predicts the feasible nodes from the dashboard's own cache (the same decoding and fit code
the pages use); then the pod is created and the real scheduler binds it or marks it
Unschedulable. Agreement: the scheduler's node is in the predicted set, and the set is empty
exactly when the scheduler says Unschedulable. Every pod carries a required affinity term on its
batch's label, so other nodes in the cluster never take part. A case the model cannot decide
(a feature it does not model) is counted, never dropped. kwok plays the kubelets: its nodes
report Ready (or NotReady, and are tainted so), and bound pods stay bound and keep their
resources, which is all the scheduler looks at.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kubernetes import client

from app.kube.api.admission_reads import AdmissionReads
from app.kube.state.store import Store
from bench.agreement_cases import Verdict, replay, shrink
from bench.agreement_cluster import (
    admission_objects,
    claim_held,
    make_nodes,
    message,
    resizable,
    resize,
    served,
    wait,
)
from bench.agreement_gen import (
    G,
    consumable_slices,
    node_body,
    partitioned_slices,
    pod_body,
    shared_slices,
    slice_body,
)

NODES_PER_BATCH = 6


@dataclass
class Report:
    seed: int
    cases: int = 0
    agreed: int = 0
    undecided: int = 0
    undecided_by: dict[str, int] = field(default_factory=dict)  # what the model could not decide
    bound: int = 0
    replayed: int = 0  # cases that disagreed once and were run again on a settled cluster
    refused: list[str] = field(default_factory=list)  # pods the API server refused (not cases)
    dra_bound: int = 0  # cases asking for the DRA-served resource that the scheduler bound
    resized: int = 0  # bound pods then resized in place (the harness playing the kubelet)
    unschedulable: int = 0
    inter_pod: int = 0  # cases where inter-pod affinity or topology spread kept the pod off a node
    partitioned: int = 0  # GPUs published split into partitions sharing counters
    several_nodes: int = 0  # slices whose devices several nodes reach
    consumable: int = 0  # slices of devices several claims may share (consumable capacity)
    failures: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"seed {self.seed}: {self.cases} cases, {self.agreed} agreed "
            f"({self.bound} bound, {self.unschedulable} unschedulable), {self.undecided} undecided, "
            f"{len(self.failures)} disagreed ({self.replayed} replayed once on a settled cluster); "
            f"undecided by {self.undecided_by or 'nothing'}; "
            f"{len(self.refused)} generated pods refused by the API server; "
            f"{self.dra_bound} bound with DRA devices; {self.resized} resized in place; "
            f"{self.inter_pod} kept off a node by inter-pod affinity or topology spread; "
            f"{self.partitioned} partitioned GPUs, {self.consumable} pools of shared GPUs and "
            f"{self.several_nodes} slices for several nodes published"
        )


def run(
    api: client.ApiClient,
    store: Store,
    cases: int,
    seed: int,
    prefix: str = "agree",
    keep: Path | None = None,
) -> Report:
    """``cases`` pods in batches of 25 over fresh nodes; the store must be watch-fed and synced.
    A disagreement that repeats is shrunk to a minimal case and written to ``keep``."""
    rng = random.Random(seed)
    admission_objects(api)
    admission = AdmissionReads(api, 10.0)
    dra = served(api)
    report = Report(seed)
    batch_no = 0
    while report.cases < cases:
        batch = f"{prefix}-{seed}-{batch_no}"
        batch_no += 1
        names = [f"{batch}-n{i}" for i in range(NODES_PER_BATCH)]
        nodes = [node_body(rng, name, batch) for name in names]
        slices = [slice_body(rng, name) for name in names if dra and rng.random() < 0.5]
        slices += shared_slices(rng, batch, names) if dra else []
        slices += [b for name in names if dra and rng.random() < 0.25 for b in partitioned_slices(rng, name)]
        slices += [b for name in names if dra and rng.random() < 0.25 for b in consumable_slices(rng, name)]
        make_nodes(api, store, nodes, slices)  # leaves out the slices this server does not take
        report.partitioned += sum(1 for b in slices if b["spec"].get("sharedCounters"))
        report.consumable += sum(
            1 for b in slices if "allowMultipleAllocations" in str(b["spec"].get("devices"))
        )
        report.several_nodes += sum(1 for b in slices if "nodeName" not in b["spec"])
        placed: list[dict[str, Any]] = []  # the pods the scheduler bound in this batch, so far
        for i in range(min(25, cases - report.cases)):
            body = pod_body(rng, f"{batch}-p{i}", batch, names, dra)
            case = {
                "seed": seed,
                "batch": batch,
                "nodes": nodes,
                "slices": slices,
                "placed": placed,
                "pod": body,
            }
            try:
                verdict = Verdict.of(api, store, admission, body)
            except client.ApiException as exc:
                if exc.status != 422:
                    raise
                report.refused.append(f"{body['metadata']['name']}: {exc.body!r}"[:300])  # never scheduled
                continue
            report.cases += 1
            report.inter_pod += verdict.kept_off
            if not verdict.agrees and not verdict.unsure:
                # Confirm on a settled cluster: the scheduler may still hold a pod the test just
                # deleted, or bind a pod it had marked Unschedulable a moment before. The same
                # pod again, after a pause, decides; a real disagreement of the model repeats.
                verdict.forget(api, store)
                time.sleep(2.0)
                body = {**body, "metadata": {**body["metadata"], "name": body["metadata"]["name"] + "-again"}}
                verdict = Verdict.of(api, store, admission, body)
                report.replayed += 1
            if verdict.unsure:
                report.undecided += 1
                for why in verdict.unsure:
                    kind = why.split(" of ")[0]
                    report.undecided_by[kind] = report.undecided_by.get(kind, 0) + 1
            elif verdict.agrees:
                report.agreed += 1
            else:
                report.failures.append(_kept(api, store, admission, {**case, "pod": body}, verdict, keep))
            if verdict.actual is None:
                report.unschedulable += 1
                verdict.forget(api, store)
                continue
            report.bound += 1
            placed.append({**body, "spec": {**body["spec"], "nodeName": verdict.actual}})
            if rng.random() < 0.3 and resizable(body) and resize(api, store, rng, body):
                report.resized += 1
            if G in verdict.planned.shape.requests:  # the devices its claim holds are seen first
                report.dra_bound += 1
                wait(lambda name=body["metadata"]["name"]: claim_held(store, name))
    return report


def _kept(
    api: client.ApiClient,
    store: Store,
    admission: AdmissionReads,
    case: dict[str, Any],
    verdict: Verdict,
    keep: Path | None,
) -> str:
    """The disagreement as YAML: shrunk to a minimal case (replayed on fresh nodes) and written
    to ``keep`` when given."""
    core = client.CoreV1Api(api)
    case = {
        **case,
        "predicted": verdict.predicted,
        "scheduler": verdict.actual or "Unschedulable",
        "message": message(core, verdict.name, verdict.namespace),
    }
    if keep is not None:
        case = shrink(case, lambda smaller: not replay(api, store, admission, smaller).agrees)
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{case['batch']}-{verdict.name}.yaml").write_text(yaml.safe_dump(case, sort_keys=False))
    return yaml.safe_dump(case, sort_keys=False)


def main() -> None:
    from tempfile import mkdtemp

    from app.kube.api.cache import ClusterCache
    from app.kube.api.client import ClusterConfig, api_client, load_configuration
    from extres_demo import testenv

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=random.SystemRandom().randrange(10**6))
    args = ap.parse_args()
    print(f"seed {args.seed}, kube {os.environ.get('EXTRES_KUBE_VERSION') or 'newest'}", flush=True)
    plane = testenv.start(Path(mkdtemp(prefix="extres-agree-")), scheduler=True)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        cache = ClusterCache(api)
        cache.start()
        assert cache.wait_synced(60)
        keep = Path(os.environ.get("EXTRES_AGREEMENT_KEEP") or "agreement-cases")
        report = run(api, cache.store, args.cases, args.seed, keep=keep)
        for case in report.failures:
            print("---\n" + case)
        print(report)
        cache.stop()
        sys.exit(1 if report.failures else 0)
    finally:
        plane.stop()


if __name__ == "__main__":
    main()
