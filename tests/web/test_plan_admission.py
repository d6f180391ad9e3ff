"""The planner reads a pasted pod as admission would leave it in its namespace."""

from __future__ import annotations

from urllib.parse import quote

from bs4 import BeautifulSoup

from app.domain.admission import LimitRange, Namespace, RuntimeClass

D = "example.com/dongle"
POD = """apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team}
spec:
  runtimeClassName: kata
  containers: [{name: app, image: x, resources: {limits: {"example.com/dongle": "1"}}}]
"""


def test_the_planner_applies_the_namespaces_admission(client, cluster):
    cluster.node("n1", {D: "2"})
    cluster.admission.namespaces["team"] = Namespace(
        {"kata": RuntimeClass("kata", overhead={"cpu": "250m"}, node_selector={"runtime": "kata"})},
        (LimitRange("defaults", default={"memory": "1Gi"}, default_request={"memory": "512Mi"}),),
    )
    html = client.get(f"/plan/?manifest={quote(POD)}").get_data(as_text=True)
    text = BeautifulSoup(html, "html.parser").get_text(" ", strip=True)
    assert "RuntimeClass kata adds its overhead (cpu=250m)" in text
    assert "RuntimeClass kata selects nodes with runtime=kata" in text
    assert "LimitRange defaults gave app its defaults" in text


def test_a_pod_admission_would_refuse_is_refused_naming_why(client, cluster):
    resp = client.get(f"/plan/?manifest={quote(POD)}")
    assert resp.status_code == 422
    text = BeautifulSoup(resp.get_data(as_text=True), "html.parser").get_text(" ", strip=True)
    assert "there is no RuntimeClass 'kata'; the pod would be refused" in text
