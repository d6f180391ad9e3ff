"""Pasted manifests as a hostile reader would write them: every one refused with a short message,
quickly, and without building what it describes."""

from __future__ import annotations

import tracemalloc

import pytest

from app.domain.manifest import ManifestError, parse_manifest
from app.domain.safe_yaml import MAX_DEPTH, MAX_ENTRIES, MAX_SCALAR

POD = "apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\nspec:\n  containers: [{{name: c}}]\n{extra}"


def bomb(levels: int = 7, width: int = 10) -> str:
    """Seven levels of ten aliases: ~1 KB of text, 10^7 nodes once expanded."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + f"\nkind: Pod\nspec:\n  nodeName: *l{levels}\n  containers: [{{name: c}}]\n"


HOSTILE = {
    "alias bomb": bomb(),
    "aliased containers and ports": (
        "kind: Pod\nspec:\n  containers: &c [{name: a, ports: &p [{containerPort: 1, hostPort: 1}]}]\n"
        "  initContainers: *c\n"
    ),
    "a merge key": "base: &b {name: c}\nkind: Pod\nspec:\n  containers: [{<<: *b}]\n",
    "an anchor alone": "kind: &k Pod\nspec: {containers: [{name: c}]}\n",
    "deep nesting": "kind: Pod\nspec: " + "[" * 3000 + "]" * 3000 + "\n",
    "nesting past the limit": "kind: Pod\nx: "
    + "{a: " * (MAX_DEPTH + 2)
    + "1"
    + "}" * (MAX_DEPTH + 2)
    + "\n",
    "a long list": POD.format(extra="  tolerations: [" + ", ".join(["{key: a}"] * (MAX_ENTRIES + 1)) + "]\n"),
    "a long value": POD.format(extra=f"  nodeName: {'n' * (MAX_SCALAR + 1)}\n"),
    "a list for a name": "kind: Pod\nmetadata: {name: ["
    + ", ".join(["x" * 50] * 20)
    + "]}\nspec: {containers: [{name: c}]}\n",
    "a mapping for a quantity": POD.replace(
        "containers: [{{name: c}}]", "containers: [{{name: c, resources: {{requests: {{cpu: {{a: b}}}}}}}}]"
    ).format(extra=""),
    "a list for a host port": POD.replace(
        "containers: [{{name: c}}]",
        "containers: [{{name: c, ports: [{{containerPort: 1, hostPort: [1, 2]}}]}}]",
    ).format(extra=""),
    "a kind that is a long list": "kind: [" + ", ".join(["Pod"] * 500) + "]\n",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_manifests_are_refused_within_a_small_memory_bound_with_a_short_message(text):
    tracemalloc.start()
    try:
        with pytest.raises(ManifestError) as refused:
            parse_manifest(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, f"{peak} bytes at the peak"
    message = refused.value.errors["manifest"]
    assert len(message) < 200, message


def test_the_refusal_says_why_and_where():
    with pytest.raises(ManifestError, match=r"Anchors and aliases \(& and \*\) are not accepted \(line 1\)"):
        parse_manifest(bomb())
    with pytest.raises(ManifestError, match=r"metadata\.name must be a string, not a list"):
        parse_manifest(HOSTILE["a list for a name"])
    with pytest.raises(ManifestError, match=f"longer than {MAX_SCALAR} characters"):
        parse_manifest(HOSTILE["a long value"])


def test_an_ordinary_manifest_still_reads():
    planned = parse_manifest(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n"
        "  template:\n    spec:\n      nodeSelector: {pool: gpu}\n      containers:\n"
        "      - name: c\n"
        "        resources: {requests: {example.com/dongle: 2}, limits: {example.com/dongle: 2}}\n"
        "        ports: [{containerPort: 80, hostPort: 8080}]\n"
    )
    assert (planned.kind, planned.name, planned.replicas) == ("Deployment", "web", 3)
    assert planned.shape.requests["example.com/dongle"] == 2
    assert planned.shape.node_selector == {"pool": "gpu"}
    assert [p.port for p in planned.shape.host_ports] == [8080]


def test_host_ports_follow_the_scheduler_and_the_api_servers_defaulting():
    planned = parse_manifest(
        "kind: Pod\nspec:\n  hostNetwork: true\n"
        "  initContainers:\n  - {name: setup, ports: [{containerPort: 81}]}\n"
        "  - {name: proxy, restartPolicy: Always, ports: [{containerPort: 82}]}\n"
        "  containers:\n  - {name: app, ports: [{containerPort: 80}]}\n"
    )
    # hostNetwork: a container port is a host port; a plain init container's has ended
    assert sorted(p.port for p in planned.shape.host_ports) == [80, 82]
