"""Decoding what the API server sends, including its odd corners."""

from app.kube.cache import EVENT
from app.kube.views import NODE, POD, PodView

# A watch bookmark for pods, byte for byte as kube-apiserver v1.20 sends it.
BOOKMARK = (
    b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12345",'
    b'"creationTimestamp":null},"spec":{"containers":null},"status":{}}}'
)


def test_a_pod_bookmark_decodes_to_its_resource_version():
    event = EVENT.decode(BOOKMARK)
    assert event.type == "BOOKMARK"
    assert POD.decode(event.object).metadata.resource_version == "12345"


def test_null_lists_are_empty():
    pod = PodView.from_json(
        {
            "metadata": {"name": "p", "namespace": "d"},
            "spec": {"containers": None, "initContainers": None},
            "status": {"conditions": None},
        }
    )
    assert (pod.requests, pod.unschedulable) == ({}, None)
    node = NODE.decode(b'{"metadata":{"name":"n"},"spec":{"taints":null},"status":{"capacity":null}}')
    assert node.metadata.name == "n"
