"""What the dashboard counts as requested on a node, against kubectl's own reading.

``kubectl describe node`` sums the requests of the node's non-terminated pods with the API's
own helper (k8s.io/component-helpers' PodRequests: sidecars, init containers, overhead), so the
numbers must be equal for every pod shape, on each tested Kubernetes version.
"""

from __future__ import annotations

import random
import subprocess

import pytest
from kubernetes import client

from app.domain.quantity import to_amount
from app.web.process import of as process_of
from tests.helpers import eventually
from tests.kube_helpers import container, create_node, own_resource, ready

pytestmark = [pytest.mark.kube, pytest.mark.compat]


def describe(control_plane, node: str) -> str:
    return subprocess.run(
        [str(control_plane.kubectl), "--kubeconfig", str(control_plane.kubeconfig), "describe", "node", node],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def kubectl_requested(control_plane, node: str) -> dict[str, str]:
    """The Requests column of kubectl describe node's "Allocated resources" table."""
    out = describe(control_plane, node)
    table = out.split("Allocated resources:", 1)[1].split("Events:", 1)[0]
    rows = [line.split() for line in table.splitlines()[4:] if line.strip()]
    return {row[0]: row[1] for row in rows}


def kubectl_pod_requests(control_plane, node: str) -> dict[str, tuple[str, str]]:
    """Pod name -> (CPU Requests, Memory Requests) from kubectl describe node's pods table."""
    out = describe(control_plane, node)
    table = out.split("Non-terminated Pods:", 1)[1].split("Allocated resources:", 1)[0]
    rows = [line.split() for line in table.splitlines()[3:] if line.strip()]
    return {row[1]: (row[2], row[6]) for row in rows}  # each amount is followed by its (percent)


def test_requested_per_node_equals_kubectls(app, core, control_plane, uid):
    r = own_resource(uid)
    node = f"{uid}-n"
    create_node(core, node, {r: "64"})
    ready(core, node)

    def pod(name: str, containers: list, init: list | None = None) -> None:
        body = {
            "metadata": {"name": f"{uid}-{name}"},
            "spec": {"nodeName": node, "containers": containers, "initContainers": init or []},
        }
        core.create_namespaced_pod("default", body)

    pod("plain", [container(requests={r: "1"})])
    pod("two", [container("a", requests={r: "2"}), container("b", requests={r: "3"})])
    # an init container larger than the app containers: its peak counts
    pod("init-peak", [container(requests={r: "2"})], [container("init", requests={r: "5"})])
    # a sidecar of 2, then an init container of 4, then an app container of 3: 1.33+ counts 6
    sidecar = container("sidecar", requests={r: "2"}, restartPolicy="Always")
    pod("sidecar", [container(requests={r: "3"})], [sidecar, container("init", requests={r: "4"})])
    # two sidecars and a small init container after them: the sidecars run beside the app
    pod(
        "sidecars",
        [container(requests={r: "1"})],
        [
            container("s1", requests={r: "2"}, restartPolicy="Always"),
            container("s2", requests={r: "1"}, restartPolicy="Always"),
            container("init", requests={r: "1"}),
        ],
    )
    store = process_of(app).local.cluster.store

    def agree() -> bool:
        theirs = kubectl_requested(control_plane, node)
        assert theirs[r] == "21"  # plain 1, two 5, init-peak 5, sidecar 6, sidecars 4
        assert store.objects.requested_on(node).get(r) == int(theirs[r])
        return True

    eventually(agree, timeout=30)


def random_pods(rng: random.Random, uid: str, r: str, node: str, runtime_class: str, n: int) -> list[dict]:
    """Pods of every shape accounting must follow: containers, sidecars and init containers in
    random order, pod-level cpu/memory, a RuntimeClass's overhead, requests from limits."""

    def ctr(name: str) -> dict:
        requests = {"cpu": rng.choice(["100m", "250m", "1"])}
        if rng.random() < 0.5:
            requests["memory"] = rng.choice(["64Mi", "128Mi"])
        ext = {r: str(rng.randint(0, 3))} if rng.random() < 0.8 else {}
        if rng.random() < 0.2:  # a request missing where a limit is set: the limit is the request
            return container(name, resources={"limits": {**requests, **ext}})
        return container(name, requests={**requests, **ext})

    pods = []
    for i in range(n):
        init = [ctr(f"i{j}") for j in range(rng.randint(0, 3))]
        for c in init:
            if rng.random() < 0.5:
                c["restartPolicy"] = "Always"
        spec: dict = {"nodeName": node, "containers": [ctr(f"c{j}") for j in range(rng.randint(1, 3))]}
        spec["initContainers"] = init
        if rng.random() < 0.3:  # pod-level: at least what the containers ask (validation)
            spec["resources"] = {"requests": {"cpu": "8", "memory": "2Gi"}}
        if rng.random() < 0.3:
            spec["runtimeClassName"] = runtime_class
        pods.append({"metadata": {"name": f"{uid}-r{i}"}, "spec": spec})
    return pods


def test_random_pods_and_resizes_are_counted_as_kubectl_counts_them(app, core, admin_api, control_plane, uid):
    """kubectl of the same version is the second oracle: for random pods (sidecars, pod-level
    resources, RuntimeClass overhead) and pods in an in-place resize, each pod's cpu and memory
    requests and the node's cpu, memory and extended requests equal kubectl describe node's.
    The test plays the kubelet's part of a resize by hand: it writes
    containerStatuses[].allocatedResources and .resources, and the PodResizePending condition,
    as a kubelet would."""
    seed = random.SystemRandom().randrange(10**6)
    print(f"accounting seed {seed}")
    # kubectl describe counts pod-level resources from 1.37 (component-helpers' PodRequests);
    # up to 1.36 it used a copy of its own that leaves them out, though the scheduler counts them
    minor = int((control_plane.state_dir / "version").read_text().split(".")[1])
    pod_level_oracle = minor >= 37
    rng = random.Random(seed)
    r = own_resource(uid)
    node = f"{uid}-n"
    create_node(core, node, {r: "500", "cpu": "1000", "memory": "1000Gi"})  # room for any resize
    ready(core, node)
    rc = f"{uid}-rc"
    client.NodeV1Api(admin_api).create_runtime_class(
        {
            "metadata": {"name": rc},
            "handler": "runc",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "64Mi"}},
        }
    )
    pods = random_pods(rng, uid, r, node, rc, 20)
    for body in pods:
        core.create_namespaced_pod("default", body)
    # resizes: a container's cpu changed through the resize subresource, what the kubelet reports
    for body in pods[:8]:
        name, spec = body["metadata"]["name"], body["spec"]
        if "resources" in spec:
            continue  # pod-level resources are resized at the pod level (alpha): not here
        first = spec["containers"][0]
        if "requests" not in first["resources"]:
            continue  # limits only: Guaranteed-like cpu, left alone
        requests = first["resources"]["requests"]
        new = rng.choice(["50m", "2"])
        eventually(
            lambda name=name: core.read_namespaced_pod_status(name, "default").status.phase == "Running"
        )

        def report(allocated: dict, actuated: dict, state: str, spec: dict = spec, name: str = name) -> None:
            """As the kubelet: what it allocated to each container and what each runs with (the
            first container's given, the others' as their spec asks)."""

            def one(c: dict, this: bool) -> dict:
                asked = {**c["resources"].get("limits", {}), **c["resources"].get("requests", {})}
                return {
                    "name": c["name"],
                    "allocatedResources": allocated if this else asked,
                    "resources": {"requests": actuated if this else asked},
                }

            status: dict = {
                "containerStatuses": [one(c, i == 0) for i, c in enumerate(spec["containers"])],
                "initContainerStatuses": [one(c, False) for c in spec["initContainers"]],
            }
            if state == "infeasible":
                status["conditions"] = [
                    {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
                ]
            core.patch_namespaced_pod_status(
                name, "default", {"status": status}, _content_type="application/strategic-merge-patch+json"
            )

        report(requests, requests, "running")  # a kubelet that can resize reports the resources it runs with
        core.patch_namespaced_pod_resize(
            name,
            "default",
            {"spec": {"containers": [{"name": first["name"], "resources": {"requests": {"cpu": new}}}]}},
        )
        state = rng.choice(["in progress", "infeasible", "done"])
        resized = {**requests, "cpu": new}
        report(
            requests if state == "infeasible" else resized, resized if state == "done" else requests, state
        )
    store = process_of(app).local.cluster.store

    def agree() -> bool:
        per_pod = kubectl_pod_requests(control_plane, node)
        for body in pods:
            name = body["metadata"]["name"]
            view = store.objects.pod("default", name)
            if "resources" in body["spec"] and not pod_level_oracle:
                continue
            cpu, memory = per_pod[name]
            got = (view.requests.get("cpu", 0), view.requests.get("memory", 0))
            assert got == (to_amount("cpu", cpu), to_amount("memory", memory)), (name, seed, body)
        theirs = kubectl_requested(control_plane, node)
        ours = store.objects.requested_on(node)
        # kubectl's "Allocated resources" total reads the spec only (getPodsTotalRequestsAndLimits
        # leaves out UseStatusResources), unlike its per-pod rows and the scheduler: the node's cpu
        # and memory are checked against the sum of its rows; extended resources cannot be resized
        # (up to 1.36, a pod with pod-level resources counts as the store's own view of it)
        for i, resource in enumerate(("cpu", "memory")):
            rows = 0
            for body in pods:
                name = body["metadata"]["name"]
                if "resources" in body["spec"] and not pod_level_oracle:
                    rows += store.objects.pod("default", name).requests.get(resource, 0)
                else:
                    rows += to_amount(resource, per_pod[name][i])
            assert ours.get(resource, 0) == rows, (resource, seed)
        assert ours.get(r, 0) == to_amount(r, theirs.get(r, "0")), seed
        return True

    eventually(agree, timeout=30)
