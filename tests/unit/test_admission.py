"""A pasted pod as admission would leave it: LimitRange defaults, a RuntimeClass's overhead and
scheduling, and the pods admission would refuse."""

from __future__ import annotations

import pytest

from app.domain.admission import LimitRange, Namespace, Rejected, RuntimeClass, admit
from app.domain.manifest import ManifestError, parse_manifest

D = "example.com/dongle"
POD = """
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: team}}
spec:
  {extra}
  containers:
  - name: app
    image: x
    resources: {resources}
  - name: helper
    image: x
"""


def planned(ns: Namespace, extra: str = "", resources: str = "{}"):
    asked: list[str] = []

    def admission(namespace: str) -> Namespace:
        asked.append(namespace)
        return ns

    got = parse_manifest(POD.format(extra=extra, resources=resources), admission)
    assert asked == ["team"]
    return got


def test_limit_range_defaults_fill_only_what_a_container_leaves_out():
    ranges = [
        LimitRange("b", default={"cpu": "9"}, default_request={"cpu": "9", D: "9"}),
        LimitRange("a", default={"cpu": "1", D: "1"}, default_request={"cpu": "500m", D: "1"}),
    ]
    got = planned(Namespace(limit_ranges=ranges), resources="{requests: {cpu: 100m}}")
    # app: its own cpu request stays; D from the first LimitRange by name (a); helper: a's defaults
    assert got.shape.requests["cpu"] == 100 + 500
    assert got.shape.requests[D] == 2
    assert any("LimitRange a" in n for n in got.notes)


def test_a_runtime_class_adds_its_overhead_node_selector_and_tolerations():
    rc = RuntimeClass(
        "kata",
        overhead={"cpu": "250m", "memory": "120Mi"},
        node_selector={"runtime": "kata"},
        tolerations=({"key": "kata", "operator": "Exists", "effect": "NoSchedule"},),
    )
    got = planned(Namespace(runtime_classes={"kata": rc}), "runtimeClassName: kata", "{requests: {cpu: 1}}")
    assert got.shape.requests["cpu"] == 1250
    assert got.shape.node_selector == {"runtime": "kata"}
    assert any(t.key == "kata" and t.effect == "NoSchedule" for t in got.shape.tolerations)
    assert any("overhead" in n for n in got.notes)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["runtimeClassName: gvisor"], "there is no RuntimeClass 'gvisor'"),
        (["runtimeClassName: kata", "nodeSelector: {runtime: runc}"], "conflicts with RuntimeClass kata"),
        (["runtimeClassName: kata", "overhead: {cpu: 1}"], "differs from RuntimeClass kata"),
    ],
)
def test_pods_admission_would_refuse_are_refused_with_the_reason(extra, message):
    rc = RuntimeClass("kata", overhead={"cpu": "250m"}, node_selector={"runtime": "kata"})
    text = POD.format(extra="\n  ".join(extra), resources="{}")
    with pytest.raises(ManifestError, match=message):
        parse_manifest(text, lambda ns: Namespace(runtime_classes={"kata": rc}))


def test_unreadable_admission_objects_are_named_not_guessed():
    got = planned(Namespace(known=False), "runtimeClassName: kata")
    assert any("could not be read" in n for n in got.notes)


def test_admission_leaves_fields_of_the_wrong_type_for_the_shape_to_refuse():
    rc = RuntimeClass("kata", node_selector={"a": "b"}, tolerations=({"key": "k"},))
    for wrong in ("nodeSelector: [1]", "tolerations: 3"):
        text = POD.format(extra=f"runtimeClassName: kata\n  {wrong}", resources="{}")
        with pytest.raises(ManifestError, match="must be a"):
            parse_manifest(text, lambda ns: Namespace(runtime_classes={"kata": rc}))
    with pytest.raises(Rejected, match="x" * 63 + "'"):  # a long name is quoted cut short
        admit({"runtimeClassName": "x" * 10_000}, Namespace())


def test_a_manifest_with_newer_fields_is_read_and_a_dra_claim_is_named_not_guessed():
    text = """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources: {requests: {cpu: "2"}, limits: {cpu: "2"}}
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
  - name: app
    image: x
    resizePolicy: [{resourceName: cpu, restartPolicy: NotRequired}]
    resources: {claims: [{name: gpu}], requests: {cpu: 500m}}
"""
    got = parse_manifest(text, lambda ns: Namespace())
    assert got.shape.requests["cpu"] == 2000  # pod-level resources
    assert got.shape.unmodelled == ("dynamic resource allocation (the pod's resource claims)",)


def test_limits_give_the_requests_before_a_limit_range_fills_the_rest():
    """The API server's order: defaulting (requests from limits) first, then LimitRanger, whose
    defaultRequest only fills what is still missing (found by a differential run on 1.35.4)."""
    ns = Namespace(limit_ranges=(LimitRange("d", {"cpu": "8"}, {"cpu": "200m", "memory": "128Mi"}),))
    spec = {
        "containers": [{"name": "a", "resources": {"limits": {"cpu": "30m"}}}],
        "initContainers": [{"name": "i", "resources": {"limits": {"cpu": "1"}}}],
    }
    out, _ = admit(spec, ns)
    assert out["containers"][0]["resources"]["requests"] == {"cpu": "30m", "memory": "128Mi"}
    assert out["initContainers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "128Mi"}


def test_a_request_above_its_defaulted_limit_is_refused_as_the_api_server_would():
    ns = Namespace(limit_ranges=(LimitRange("d", {"memory": "1Gi"}, {"memory": "128Mi"}),))
    spec = {"containers": [{"name": "a", "resources": {"requests": {"memory": "2Gi"}}}]}
    with pytest.raises(Rejected, match=r"spec\.containers\[0\]\.resources\.requests: memory 2Gi"):
        admit(spec, ns)
