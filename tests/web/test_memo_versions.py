"""Kept answers follow every change they depend on: a pod adopted by a workload, or orphaned,
moves its row on the Workloads page at once, though its node's numbers did not change (the
workload rows are kept by the store's rows and holders versions)."""

from __future__ import annotations

from tests.web.test_pages import soup

D = "example.com/dongle"


def _workloads(client) -> set[str]:
    return {tr["data-workload"] for tr in soup(client.get("/workloads/")).select("tr[data-workload]")}


def test_a_pod_adopted_then_orphaned_moves_its_workload_row(client, cluster):
    cluster.node("n1", {D: "4"})
    cluster.pod("p", "n1", {D: "1"})
    alone = _workloads(client)
    cluster.pod("p", "n1", {D: "1"}, owner=("ReplicaSet", "web-5d4f"))  # adopted: same node, same requests
    adopted = _workloads(client)
    cluster.pod("p", "n1", {D: "1"})  # orphaned again
    assert adopted != alone and any("web-5d4f" in w for w in adopted)
    assert _workloads(client) == alone
