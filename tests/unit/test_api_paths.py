"""API paths are built one way (app.kube.api.paths): the core group under /api, the others under
/apis, and every segment a caller gives quoted whole, so a name never changes the path's shape."""

from __future__ import annotations

from app.kube.api.paths import path


def test_the_core_group_and_the_others():
    assert path("v1", "nodes", "n1") == "/api/v1/nodes/n1"
    assert path("resource.k8s.io/v1", "deviceclasses") == "/apis/resource.k8s.io/v1/deviceclasses"
    assert path("visibility.kueue.x-k8s.io/v1beta2") == "/apis/visibility.kueue.x-k8s.io/v1beta2"


def test_a_segment_never_adds_a_slash_a_query_or_a_fragment():
    odd = "a/../b?watch=1#x y"
    built = path("v1", "namespaces", "default", "pods", odd)
    assert built == "/api/v1/namespaces/default/pods/a%2F..%2Fb%3Fwatch%3D1%23x%20y"
    assert built.count("/") == 6 and "?" not in built and "#" not in built
