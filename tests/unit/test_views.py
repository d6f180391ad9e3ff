"""Decoding what the API server sends, including its odd corners."""

import json

from app.kube.api.watch_wire import EVENT
from app.kube.wire.reading import NODES, PODS, QUOTAS

# A watch bookmark for pods, byte for byte as kube-apiserver v1.20 sends it.
BOOKMARK = (
    b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12345",'
    b'"creationTimestamp":null},"spec":{"containers":null},"status":{}}}'
)


def test_a_pod_bookmark_decodes_to_its_resource_version():
    event = EVENT.decode(BOOKMARK)
    assert event.type == "BOOKMARK"
    _, version, problem = PODS.one(event.object)
    assert (version, problem) == ("12345", None)


def test_null_lists_and_null_parts_are_empty():
    pod, _, problem = PODS.one(
        json.dumps(
            {
                "metadata": {"name": "p", "namespace": "d", "labels": None},
                "spec": {"containers": None, "initContainers": None, "volumes": None, "nodeName": None},
                "status": {"conditions": None, "phase": None},
            }
        ).encode()
    )
    assert problem is None and pod is not None
    assert (pod.requests, pod.unschedulable, pod.phase, pod.node_name) == ({}, None, "Pending", "")
    node, _, problem = NODES.one(
        b'{"metadata":{"name":"n"},"spec":{"taints":null},"status":{"capacity":null}}'
    )
    assert problem is None and node is not None and node.name == "n"
    nothing, _, problem = NODES.one(b'{"metadata":null,"spec":null,"status":null}')
    assert problem is None and nothing is not None and nothing.name == ""


def pod_with_volume(volume: dict) -> bytes:
    return json.dumps(
        {
            "metadata": {"name": "db-0", "namespace": "d", "resourceVersion": "7"},
            "spec": {"containers": [{"name": "c"}], "volumes": [{"name": "v", **volume}]},
        }
    ).encode()


def test_claim_volumes_decode_and_are_named_as_not_modelled():
    """A StatefulSet's pod (a claim object) once failed to decode: msgspec reads ``Raw | None``
    only from null."""
    for volume in (
        {"persistentVolumeClaim": {"claimName": "d-0"}},
        {"ephemeral": {"volumeClaimTemplate": {}}},
    ):
        pod, version, problem = PODS.one(pod_with_volume(volume))
        assert problem is None and pod is not None and version == "7"
        assert pod.placement.unmodelled == ("persistent volumes (binding, zones and per-node volume limits)",)
    pod, _, _ = PODS.one(pod_with_volume({"configMap": {"name": "x"}}))
    assert pod is not None and pod.placement.unmodelled == ()


def test_a_container_port_host_ip_is_read_with_the_api_spelling():
    raw = json.dumps(
        {
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {
                "containers": [
                    {"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]}
                ]
            },
        }
    ).encode()
    pod, _, _ = PODS.one(raw)
    assert pod is not None
    assert [(h.port, h.ip) for h in pod.placement.host_ports] == [(8080, "10.0.0.1")]


def pod_list(*items: dict) -> bytes:
    return json.dumps({"metadata": {"resourceVersion": "99", "continue": "next"}, "items": items}).encode()


def test_one_bad_item_leaves_the_rest_of_the_page_and_is_named_with_its_path():
    good = {"metadata": {"name": "a", "namespace": "d"}, "spec": {"containers": [{"name": "c"}]}}
    bad = {"metadata": {"name": "b", "namespace": "d", "resourceVersion": "5"}, "spec": {"nodeName": 7}}
    page = PODS.page(pod_list(good, bad, good | {"metadata": {"name": "c", "namespace": "d"}}))
    assert [p.name for p in page.views] == ["a", "c"]
    assert (page.cont, page.resource_version) == ("next", "99")
    [problem] = page.unreadable
    assert (problem.kind, problem.namespace, problem.name, problem.resource_version) == (
        "pods",
        "d",
        "b",
        "5",
    )
    assert "$.spec.nodeName" in problem.reason
    assert str(problem).startswith("d/b: ")


def test_an_unusable_quantity_leaves_the_quota_out_not_the_list():
    ok = {"metadata": {"name": "q", "namespace": "n"}, "status": {"hard": {"requests.example.com/d": "2"}}}
    page = QUOTAS.page(pod_list(ok, {"metadata": {"name": "r", "namespace": "n"}, "status": {"hard": []}}))
    assert [q.key for q in page.views] == [("n", "q")]
    assert [(p.namespace, p.name) for p in page.unreadable] == [("n", "r")]


def test_host_ports_are_the_app_containers_and_sidecars_not_plain_init_containers():
    """kube-scheduler's GetHostPorts (1.29+): a plain init container has ended by the time the pod
    runs, so its host port is free again; a sidecar keeps its own."""

    def port(n: int) -> list[dict]:
        return [{"containerPort": n, "hostPort": n}]

    raw = json.dumps(
        {
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {
                "initContainers": [
                    {"name": "setup", "ports": port(81)},
                    {"name": "proxy", "restartPolicy": "Always", "ports": port(82)},
                ],
                "containers": [{"name": "app", "ports": port(80)}],
            },
        }
    ).encode()
    pod, _, _ = PODS.one(raw)
    assert pod is not None
    assert [h.port for h in pod.placement.host_ports] == [80, 82]
