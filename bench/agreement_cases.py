"""One agreement case: the model's prediction for a pod and the real scheduler's outcome
(``Verdict``), and a case replayed on fresh nodes (``replay``) and shrunk to what still
disagrees (``shrink``), to be kept as a file (tests/agreement_cases/, replayed in CI).

A case is a mapping: ``batch`` (the string every name and label of its nodes and pods carries),
``nodes`` and ``slices`` as created, ``placed`` (the pods bound there before it, each with its
``nodeName``), ``pod``, and what was seen (``predicted``, ``scheduler``, ``message``)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from app.domain.fit import fits
from app.domain.manifest import Planned, parse_manifest
from app.domain.shape import ACROSS_NODES
from app.kube.api.admission_reads import AdmissionReads
from app.kube.state.store import Store
from bench.agreement_cluster import make_nodes, outcome, remove_nodes, wait


def predict(admission: AdmissionReads, body: dict[str, Any]) -> Planned:
    """The pod as admission will make it (LimitRange, RuntimeClass, default tolerations, a
    hostNetwork pod's ports, matchLabelKeys merged): the planner's reading of a pasted manifest."""
    return parse_manifest(json.dumps(body), admission.namespace)


def feasible(store: Store, planned: Planned) -> tuple[list[str], tuple[str, ...], bool]:
    """The nodes the model says the pod fits, as What-if decides it (inter-pod affinity and
    topology spread over the cache's pods), what it could not decide, and whether those two
    filters kept the pod off a node the others let it onto."""
    facts = store.node_facts()
    near = store.inter_pod(planned.shape, planned.namespace, planned.labels, planned.terms)
    weighed = near.applied(facts) if near is not None else facts
    unsure = tuple(u for u in planned.shape.unmodelled if u not in ACROSS_NODES)
    kept_off = any(
        fits(planned.shape, a) and not fits(planned.shape, b) for a, b in zip(facts, weighed, strict=True)
    )
    predicted = sorted(n.name for n in weighed if fits(planned.shape, n))
    return predicted, unsure + (near.undecided if near else ()), kept_off


@dataclass
class Verdict:
    """One pod: the model's prediction from the cache, then the real scheduler's outcome."""

    planned: Planned
    predicted: list[str]
    unsure: tuple[str, ...]
    kept_off: bool
    actual: str | None  # the node it was bound to; None: Unschedulable
    namespace: str
    name: str

    @classmethod
    def of(
        cls, api: client.ApiClient, store: Store, admission: AdmissionReads, body: dict[str, Any]
    ) -> Verdict:
        """Predict, create the pod (an ApiException if the API server refuses it), wait for the
        scheduler's outcome and for the cache to see it."""
        core = client.CoreV1Api(api)
        planned = predict(admission, body)
        predicted, unsure, kept_off = feasible(store, planned)
        ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
        core.create_namespaced_pod(ns, body)
        actual = outcome(core, name, ns)
        if actual is not None:
            wait(lambda: (p := store.objects.pod(ns, name)) is not None and p.node_name == actual)
        return cls(planned, predicted, unsure, kept_off, actual, ns, name)

    @property
    def agrees(self) -> bool:
        return (self.actual is None and not self.predicted) or (self.actual in self.predicted)

    def forget(self, api: client.ApiClient, store: Store) -> None:
        client.CoreV1Api(api).delete_namespaced_pod(self.name, self.namespace, grace_period_seconds=0)
        wait(lambda: store.objects.pod(self.namespace, self.name) is None)


_replays = itertools.count()


def replay(api: client.ApiClient, store: Store, admission: AdmissionReads, case: dict[str, Any]) -> Verdict:
    """The case again on fresh nodes (its batch string renamed everywhere): the nodes and slices
    made, the placed pods bound by name (past the scheduler, as it had bound them), then the pod
    predicted and scheduled; everything removed after."""
    batch = case["batch"]
    fresh = json.loads(json.dumps(case).replace(batch, f"{batch}-r{next(_replays)}"))
    core = client.CoreV1Api(api)
    make_nodes(api, store, fresh["nodes"], fresh["slices"])
    made: list[tuple[str, str]] = []
    try:
        for body in fresh["placed"]:
            ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
            core.create_namespaced_pod(ns, body)
            made.append((ns, name))
            wait(lambda ns=ns, name=name: store.objects.pod(ns, name) is not None)
        pod = fresh["pod"]
        made.append((pod["metadata"]["namespace"], pod["metadata"]["name"]))
        return Verdict.of(api, store, admission, pod)
    finally:
        for ns, name in made:
            try:
                core.delete_namespaced_pod(name, ns, grace_period_seconds=0)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
        wait(lambda: not any(store.objects.pod(*key) for key in made))
        remove_nodes(api, store, fresh["nodes"], fresh["slices"])


# parts of a pod spec a disagreement may not need (the batch's node affinity term always stays)
OPTIONAL = (
    "initContainers", "tolerations", "nodeSelector", "runtimeClassName", "hostNetwork",
    "topologySpreadConstraints", "resources",
)  # fmt: skip
OPTIONAL_AFFINITY = ("podAffinity", "podAntiAffinity")


def smaller(case: dict[str, Any]) -> list[dict[str, Any]]:
    """Each case one step smaller than ``case``: a placed pod fewer, a part of the pod's spec
    fewer, a container fewer, a slice several nodes reach fewer, a node fewer (one no pod is
    placed on, with its own slice)."""
    out = []
    placed = case["placed"]
    for i in range(len(placed)):
        out.append({**case, "placed": placed[:i] + placed[i + 1 :]})
    pod, spec = case["pod"], case["pod"]["spec"]
    for key in OPTIONAL:
        if key in spec:
            out.append({**case, "pod": {**pod, "spec": {k: v for k, v in spec.items() if k != key}}})
    affinity = spec.get("affinity") or {}
    for key in OPTIONAL_AFFINITY:
        if key in affinity:
            rest = {k: v for k, v in affinity.items() if k != key}
            out.append({**case, "pod": {**pod, "spec": {**spec, "affinity": rest}}})
    containers = spec["containers"]
    for i in range(1, len(containers)):
        rest = containers[:i] + containers[i + 1 :]
        out.append({**case, "pod": {**pod, "spec": {**spec, "containers": rest}}})
    for i, body in enumerate(case["slices"]):
        if "nodeName" not in body["spec"]:  # a slice several nodes reach
            out.append({**case, "slices": case["slices"][:i] + case["slices"][i + 1 :]})
    used = {p["spec"]["nodeName"] for p in placed}
    for i, node in enumerate(case["nodes"]):
        name = node["metadata"]["name"]
        if name not in used:
            slices = [s for s in case["slices"] if s["spec"].get("nodeName") != name]
            out.append({**case, "nodes": case["nodes"][:i] + case["nodes"][i + 1 :], "slices": slices})
    return out


def shrink(
    case: dict[str, Any], disagrees: Callable[[dict[str, Any]], bool], budget: int = 60
) -> dict[str, Any]:
    """Greedily the smallest case that still disagrees: each step takes the first one-step-smaller
    case that does, until none does or ``budget`` replays are spent."""
    spent = 0
    while True:
        for candidate in smaller(case):
            if spent >= budget:
                return case
            spent += 1
            if disagrees(candidate):
                case = candidate
                break
        else:
            return case
