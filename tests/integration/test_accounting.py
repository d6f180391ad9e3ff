"""What the dashboard counts as requested on a node, against kubectl's own reading.

``kubectl describe node`` sums the requests of the node's non-terminated pods with the API's
own helper (k8s.io/component-helpers' PodRequests: sidecars, init containers, overhead), so the
numbers must be equal for every pod shape, on each tested Kubernetes version.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import eventually
from tests.kube_helpers import container, create_node, own_resource, ready

pytestmark = [pytest.mark.kube, pytest.mark.compat]


def kubectl_requested(control_plane, node: str) -> dict[str, str]:
    """The Requests column of kubectl describe node's "Allocated resources" table."""
    out = subprocess.run(
        [str(control_plane.kubectl), "--kubeconfig", str(control_plane.kubeconfig), "describe", "node", node],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    table = out.split("Allocated resources:", 1)[1].split("Events:", 1)[0]
    rows = [line.split() for line in table.splitlines()[4:] if line.strip()]
    return {row[0]: row[1] for row in rows}


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
    store = app.extensions["extres"].cluster.store

    def agree() -> bool:
        theirs = kubectl_requested(control_plane, node)
        assert theirs[r] == "21"  # plain 1, two 5, init-peak 5, sidecar 6, sidecars 4
        assert store.requested_on(node).get(r) == int(theirs[r])
        return True

    eventually(agree, timeout=30)
