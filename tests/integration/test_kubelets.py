"""kwok plays the kubelets of the test and demo control plane (demo/extres_demo/kwok-stages.yaml): what the
suite and the demo rely on, checked against the real controllers."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, ready, workload

pytestmark = pytest.mark.kube


def test_a_node_turns_ready_its_pods_run_end_and_go_away(core, admin_api, uid):
    node = f"{uid}-n"
    create_node(core, node, labels={"kubernetes.io/hostname": node})
    ready(core, node)  # Ready, and no not-ready taint (the node lifecycle controller)
    lease = client.CoordinationV1Api(admin_api).read_namespaced_lease(node, "kube-node-lease")
    assert lease.spec.renew_time is not None  # kwok keeps the lease

    create_pod(core, f"{uid}-p", node)
    eventually(lambda: core.read_namespaced_pod(f"{uid}-p", "default").status.phase == "Running")
    # deleted with the default grace period: Terminating, then gone (it stayed for ever before)
    core.delete_namespaced_pod(f"{uid}-p", "default")

    def gone() -> bool:
        try:
            core.read_namespaced_pod(f"{uid}-p", "default")
        except client.ApiException as exc:
            return exc.status == 404
        return False

    eventually(gone, timeout=30)

    workload(admin_api, "Job", f"{uid}-job", node, {})
    jobs = client.BatchV1Api(admin_api)
    eventually(lambda: jobs.read_namespaced_job(f"{uid}-job", "default").status.succeeded == 1, timeout=60)


def test_a_node_labelled_not_ready_is_tainted_by_the_node_lifecycle_controller(core, uid):
    node = f"{uid}-sick"
    create_node(core, node, labels={"extres.test/not-ready": "true"})

    def tainted() -> bool:
        taints = core.read_node(node).spec.taints or ()
        return {t.effect for t in taints if t.key == "node.kubernetes.io/not-ready"} == {
            "NoSchedule",
            "NoExecute",
        }

    eventually(tainted, timeout=30)
