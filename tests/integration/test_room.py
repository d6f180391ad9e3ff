"""The free a job can use, checked against kube-scheduler placing real pods. A resource of this
test's own on four kwok nodes: 3 free, 2 free, 4 free but cordoned, 4 free but tainted. The strip
says free 13, schedulable 5, largest block 3, two 2-each pods fit and no 4-each pod; the
scheduler then binds exactly two of three 2-each pods and leaves a 4-each pod Pending."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup

from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod, ready

pytestmark = [pytest.mark.kube, pytest.mark.scheduler]


def strip_room(web: Any, resource: str) -> Any:
    page = BeautifulSoup(web.get("/").get_data(as_text=True), "html.parser")
    return page.select_one(f'.strip [data-room="{resource}"]')


def test_what_the_strip_says_fits_now_is_what_the_scheduler_places(core, uid, web, scheduler):
    resource = f"example.com/r{uid[-8:].replace('-', '')}"
    nodes = {f"{uid}-a": "4", f"{uid}-b": "2", f"{uid}-cordoned": "4", f"{uid}-tainted": "4"}
    for name, amount in nodes.items():
        create_node(core, name, {resource: amount}, labels={"group": uid})
    ready(core, *nodes)
    core.patch_node(f"{uid}-cordoned", {"spec": {"unschedulable": True}})
    core.patch_node(
        f"{uid}-tainted", {"spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}}
    )
    create_pod(core, f"{uid}-holds", f"{uid}-a", {resource: "1"})  # 3 free left on a

    def said() -> Any:
        found = strip_room(web, resource)
        return (
            found
            if found is not None and found.select_one('[data-field="schedulable"]').get_text() == "5"
            else None
        )

    room = eventually(said, timeout=30)
    assert room.select_one('[data-field="free"]').get_text() == "13"
    assert room.select_one('[data-field="largest"]').get_text() == "3"
    excluded = {li["data-excluded"]: li["data-count"] for li in room.select("[data-excluded]")}
    assert excluded == {"cordoned": "1", "tainted dedicated=x:NoSchedule": "1"}
    fits = {int(s["data-fits"]): int(s["data-count"]) for s in room.select("[data-fits]")}
    assert fits == {1: 5, 2: 2, 4: 0}
    # the scheduler: two of three 2-each pods bound, the third and a 4-each pod left Pending
    for i in range(3):
        create_pod(core, f"{uid}-two-{i}", None, {resource: "2"})
    create_pod(core, f"{uid}-four", None, {resource: "4"})

    def settled() -> tuple[int, int] | None:
        pods = [
            core.read_namespaced_pod(f"{uid}-{n}", "default") for n in ("two-0", "two-1", "two-2", "four")
        ]
        bound = sum(1 for p in pods[:3] if p.spec.node_name)
        waiting = [p for p in pods if any(c.reason == "Unschedulable" for c in p.status.conditions or ())]
        return (bound, len(waiting)) if bound + len(waiting) == 4 else None

    assert eventually(settled, timeout=30) == (fits[2], 2)
    assert all(
        core.read_namespaced_pod(f"{uid}-two-{i}", "default").spec.node_name in (f"{uid}-a", f"{uid}-b", None)
        for i in range(3)
    )
