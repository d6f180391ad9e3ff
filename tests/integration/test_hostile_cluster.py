"""A hostile cluster and hostile users against the app served as in the container (gunicorn, its
worker, the selector sandbox): objects a driver, a user or a controller may write (numbers of
thousands of digits, deep nesting, long strings, odd Unicode) go in through the API server and
reach the app through its real watches; then hundreds of hostile requests on every page and
form. Counted, not timed: no answer is a 500, the worker is the same process throughout, and
every node is as it was."""

from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.kube.api import raw
from tests.helpers import eventually
from tests.kube_helpers import create_node, create_pod
from tests.serving import Server

pytestmark = [pytest.mark.kube, pytest.mark.compat]
D = "example.com/dongle"
DRIVER = "hostile.example.com"
BIG = "9" * 4400  # past Python's 4,300-digit int limit
DEEP = "[" * 5000 + "]" * 5000
PAGES = [
    "/",
    "/pending/",
    "/devices/",
    "/plan/",
    "/workloads/",
    "/history/",
    "/export.csv",
    "/export.json",
    "/heat",
    "/workloads/export.csv",
]
HOSTILE_VALUES = [
    BIG, f"1e{BIG}", f"-{BIG}", f"{BIG}Ki", "9" * 4301, "1e999", "\uff13", "\u00b2", "\u0663", "NaN",
    "\x00", "<script>alert(1)</script>", "a" * 20_000, DEEP[:8000], "2Ki", "-1", "1.5", " 3 ", "",
    "example.com/" + "x" * 300, "kubernetes.io/x",
]  # fmt: skip
FIELDS = [
    "resource",
    "quantity",
    "expected",
    "replicas",
    "per_node",
    "requests",
    "selector",
    "nodes",
    "q",
    "min",
]


def hostile_objects(node: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(collection path, name, body) of each object a hostile driver or user may publish."""
    cls = "/apis/resource.k8s.io/v1/deviceclasses"
    slices = "/apis/resource.k8s.io/v1/resourceslices"

    def device_class(name: str, expression: str) -> tuple[str, str, dict[str, Any]]:
        spec = {
            "extendedResourceName": f"{name}.example.com/gpu",
            "selectors": [{"cel": {"expression": expression}}],
        }
        return cls, name, {"metadata": {"name": name}, "spec": spec}

    def resource_slice(name: str, devices: list[dict[str, Any]]) -> tuple[str, str, dict[str, Any]]:
        spec = {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
        }
        return slices, name, {"metadata": {"name": name}, "spec": {**spec, "devices": devices}}

    capacity = f'device.capacity["{DRIVER}"].memory'
    return [
        device_class(f"{node}-huge-literal", f'{capacity}.compareTo(quantity("{"9" * 4298}")) > 0'),
        device_class(
            f"{node}-reads-capacity",
            f'device.driver == "{DRIVER}" && {capacity}.isGreaterThan(quantity("1"))',
        ),
        device_class(f"{node}-deep", "(" * 60 + "true" + ")" * 60),
        device_class(f"{node}-unicode", 'device.driver == "\u01c5\u202e\ufeff\U0001f600"'),
        device_class(
            f"{node}-costly",
            "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, "
            "[1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a+b+c+d > 0))))",
        ),
        resource_slice(f"{node}-huge-capacity", [{"name": "d0", "capacity": {"memory": {"value": BIG}}}]),
        resource_slice(f"{node}-huge-exponent", [{"name": "d0", "capacity": {"memory": {"value": "9e18"}}}]),
        resource_slice(
            f"{node}-odd-attributes",
            [
                {
                    "name": f"d{i}",
                    "attributes": {
                        "s": {"string": "\u202e" * 32 + "x" * 32},
                        "i": {"int": 2**63 - 1 - i},
                        "v": {"version": "1.0.0-" + "a" * 50},
                    },
                }
                for i in range(3)
            ],
        ),
    ]


def worker_pids(server: Server) -> list[int]:
    text = Path(f"/proc/{server.proc.pid}/task/{server.proc.pid}/children").read_text()
    return sorted(int(p) for p in text.split())


def test_a_hostile_cluster_and_hostile_users_take_down_nothing(control_plane, admin_api, core, uid):
    nodes = [f"{uid}-{i}" for i in range(2)]
    for name in nodes:
        create_node(core, name, {D: "4", "example.com/big": str(2**63 - 1), "example.com/exp": "9e18"})
    core.patch_node(nodes[1], {"metadata": {"annotations": {"extres.dev/desired-capacity": DEEP}}})
    create_pod(core, f"{uid}-p", nodes[0], {D: "1"})
    pending = f"{uid}-w"
    create_pod(core, pending, None, {D: "9"})
    message = f"0/{BIG} nodes are available: {BIG} Insufficient {D}. preemption: 0/{BIG} nodes are available."
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    core.patch_namespaced_pod_status(
        pending, "default", {"status": {"conditions": [condition]}}
    )  # as a scheduler

    def node_state() -> list[Any]:
        return [
            (n.metadata.labels, n.metadata.annotations, n.status.capacity, n.status.allocatable)
            for n in (core.read_node(name) for name in nodes)
        ]

    server = Server(control_plane)
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    statuses: dict[int, int] = {}

    def ask(path: str, data: dict[str, str] | None = None) -> tuple[int, str]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        try:
            with opener.open(server.url + path, data=body, timeout=30) as resp:
                status, text = resp.status, resp.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            with exc:
                status, text = exc.code, exc.read().decode(errors="replace")
        statuses[status] = statuses.get(status, 0) + 1
        assert status != 500 and "Traceback" not in text, (path, str(data)[:200], status, text[:300])
        return status, text

    created: list[tuple[str, str]] = []
    try:
        eventually(lambda: nodes[1] in ask(f"/?q={uid}")[1], timeout=30)  # the first page of many nodes
        workers = worker_pids(server)
        before = node_state()
        refused_by_api = 0
        for collection, name, body in hostile_objects(nodes[0]):
            try:
                raw.call(admin_api, "POST", collection, 30, payload=body)
                created.append((collection, name))
            except client.ApiException:
                refused_by_api += 1  # the API server's own validation: never reaches the app
            for page in [*PAGES, f"/nodes/{nodes[0]}", f"/nodes/{nodes[1]}"]:
                ask(page)
        form = ask(f"/changes/nodes/{nodes[0]}/resources/new?resource={D}")[1]
        token = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
        posts = [
            f"/changes/nodes/{nodes[0]}/resources",
            f"/changes/nodes/{nodes[0]}/resources/remove",
            "/changes/bulk/preview",
            "/changes/bulk/apply",
            "/plan/",
        ]
        sent = 0
        for field in FIELDS:
            for value in HOSTILE_VALUES:
                ask(f"/plan/?{urllib.parse.urlencode({field: value[:4500]})}")
                ask(
                    posts[sent % len(posts)],
                    {"csrf_token": token, "resource": D, "quantity": "1", field: value},
                )
                sent += 2
        manifests = [
            f"kind: Deployment\nspec: {{replicas: {BIG}, template: {{spec: {{containers: [{{name: a}}]}}}}}}",
            f"kind: Pod\nspec: {{containers: [{{name: a, resources: {{requests: {{cpu: 1e{BIG}}}}}}}]}}",
            DEEP[:6000],
        ]
        for manifest in manifests:
            ask("/plan/", {"csrf_token": token, "manifest": manifest, "replicas": "1"})
            sent += 1
        assert ask("/healthz")[0] == 200
        crashes = len(set(workers) ^ set(worker_pids(server)))
        unchanged = node_state() == before
        print(
            f"\nhostile objects: {len(hostile_objects(nodes[0]))}, {refused_by_api} refused by the API; "
            f"hostile requests: {sent}; answers: {json.dumps(statuses, sort_keys=True)}; "
            f"500s: {statuses.get(500, 0)}; worker crashes: {crashes}; every node unchanged: {unchanged}"
        )
        assert sent >= 300 and statuses.get(500, 0) == 0 and crashes == 0 and unchanged
    finally:
        server.kill()
        for collection, name in created:
            raw.call(admin_api, "DELETE", f"{collection}/{name}", 30)
