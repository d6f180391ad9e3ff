"""The strip says what a job can use now beside the arithmetic (app/domain/room.py): free, the
free on nodes a plain pod may be placed on, each node left out named with why, and how many pods
of a few sizes fit now."""

from __future__ import annotations

from tests.helpers import page

GPU = "nvidia.com/gpu"


def test_the_strip_says_what_a_job_can_use_now_beside_the_arithmetic(client, cluster):
    cluster.node("open", {GPU: "4"})
    cluster.node("cordoned", {GPU: "8"}, unschedulable=True)
    cluster.node(
        "down",
        {GPU: "8"},
        ready="False",
        taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}],
    )
    room = page(client, "/").select_one(f'.strip [data-room="{GPU}"]')
    assert room.select_one('[data-field="free"]').get_text() == "20"
    assert room.select_one('[data-field="schedulable"]').get_text() == "4"
    left_out = {e["data-excluded"]: (e.get_text(), e["title"]) for e in room.select("[data-excluded]")}
    assert left_out == {
        "NotReady": ("1 NotReady", "down"),
        "cordoned": ("1 cordoned", "cordoned"),
    }  # names on hover
    assert {s["data-fits"]: s["data-count"] for s in room.select("[data-fits]")} == {
        "1": "4",
        "2": "2",
        "4": "1",
        "8": "0",
    }
    assert "none of 8" in room.get_text()
