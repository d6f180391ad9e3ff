"""What-if admits a pasted pod as the API server does, in its order (app.domain.admission.admit):
a property test (Hypothesis) against the API server's own answer. Each generated pod (containers
and init containers with requests, limits, both or neither for cpu, memory and an extended
resource) is created with dryRun=All in a namespace with two LimitRanges and naming a
RuntimeClass with an overhead; what the API server would store is compared, container by
container and resource by resource, with what admit makes of it, read through the app's own
AdmissionReads. On each tested version."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes import client

from app.domain.admission import Rejected, admit
from app.domain.quantity import to_amount
from app.kube.api import raw
from app.kube.api.admission_reads import AdmissionReads
from tests.helpers import eventually

pytestmark = [pytest.mark.kube, pytest.mark.compat]
D = "example.com/dongle"
NS = "extres-defaulting"
RC = "extres-defaulting-overhead"
# Two LimitRanges, for different resources: where LimitRanges disagree on one resource the API
# server applies them in its informer's order, which is not defined (seen here: either one)
RANGES = [
    {"name": "a-cpu", "default": {"cpu": "2"}, "defaultRequest": {"cpu": "200m"}},
    {"name": "b-memory", "default": {"memory": "1Gi"}, "defaultRequest": {"memory": "128Mi"}},
]


@pytest.fixture(scope="module")
def namespace(admin_api):
    core = "/api/v1/namespaces"
    raw.call(admin_api, "POST", core, 30, payload={"metadata": {"name": NS}})
    for r in RANGES:
        limits = [{"type": "Container", "default": r["default"], "defaultRequest": r["defaultRequest"]}]
        body = {"metadata": {"name": r["name"]}, "spec": {"limits": limits}}
        raw.call(admin_api, "POST", f"{core}/{NS}/limitranges", 30, payload=body)
    rc = {"metadata": {"name": RC}, "handler": "runc", "overhead": {"podFixed": {"cpu": "100m"}}}
    raw.call(admin_api, "POST", "/apis/node.k8s.io/v1/runtimeclasses", 30, payload=rc)
    # LimitRanger reads LimitRanges through an informer: wait until it has these
    probe = {"metadata": {"generateName": "p-"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}

    def defaulted() -> bool:
        out = raw.call(admin_api, "POST", f"{core}/{NS}/pods", 30, query={"dryRun": "All"}, payload=probe)
        return out["spec"]["containers"][0].get("resources", {}).get("requests") == {
            "cpu": "200m",
            "memory": "128Mi",
        }

    eventually(defaulted, timeout=60, interval=0.5)
    yield AdmissionReads(admin_api, 30).namespace(NS)
    raw.call(admin_api, "DELETE", f"/apis/node.k8s.io/v1/runtimeclasses/{RC}", 30)
    raw.call(admin_api, "DELETE", f"{core}/{NS}", 30)


amounts = {"cpu": ["100m", "300m", "1", "1500m"], "memory": ["64Mi", "256Mi", "2Gi"], D: ["1", "2"]}


@st.composite
def resources(draw) -> dict[str, Any]:
    requests, limits = {}, {}
    for name, values in amounts.items():
        ways = ["none", "limit", "both"] if name == D else ["none", "request", "limit", "both"]
        way = draw(st.sampled_from(ways))
        value = draw(st.sampled_from(values))
        if way in ("request", "both"):
            requests[name] = value
        if way in ("limit", "both"):  # a limit at least the request (an extended one equal to it)
            higher = [v for v in values if to_amount(name, v) >= to_amount(name, value)]
            limits[name] = value if name == D else draw(st.sampled_from(higher))
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


@st.composite
def pods(draw) -> dict[str, Any]:
    containers = [
        {"name": f"c{i}", "image": "registry.example/x:1", "resources": draw(resources())}
        for i in range(draw(st.integers(1, 3)))
    ]
    init = [
        {"name": f"i{i}", "image": "registry.example/x:1", "resources": draw(resources())}
        for i in range(draw(st.integers(0, 2)))
    ]
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if draw(st.booleans()):
        spec["runtimeClassName"] = RC
    return spec


def normalized(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, int]]]:
    """Each container's requests and limits as amounts (the API server writes "1" as "1", "1000m"
    as "1": compared as numbers)."""
    out = []
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or ():
            res = c.get("resources") or {}
            for kind in ("requests", "limits"):
                given = res.get(kind) or {}
                out.append((c["name"], kind, {k: to_amount(k, str(v)) for k, v in given.items()}))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(spec=pods())
def test_what_if_admits_a_pod_as_the_api_server_stores_it(namespace, admin_api, spec):
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}, "spec": spec}
    path = f"/api/v1/namespaces/{NS}/pods"
    try:
        stored = raw.call(admin_api, "POST", path, 30, query={"dryRun": "All"}, payload=body)
    except client.ApiException as exc:  # refused: What-if refuses it too, for the same field
        assert exc.status == 422, exc.body
        field = json.loads(exc.body)["details"]["causes"][0]["field"]
        with pytest.raises(Rejected, match=re.escape(field)):
            admit(spec, namespace)
        return
    admitted, _ = admit(spec, namespace)
    assert normalized(admitted) == normalized(stored["spec"]), (
        normalized(admitted),
        normalized(stored["spec"]),
    )
    want = {k: to_amount(k, str(v)) for k, v in (stored["spec"].get("overhead") or {}).items()}
    assert {k: to_amount(k, str(v)) for k, v in (admitted.get("overhead") or {}).items()} == want
