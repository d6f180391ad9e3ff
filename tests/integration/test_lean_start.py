"""A fresh process lists, serves the overview, writes a node and its ConfigMap documents, reviews
a token and a right, without importing the client's generated API classes (``CoreV1Api`` and its
pydantic models: ~0.6 s and ~21 MiB, docs/performance.md): every request goes through
app.kube.api.raw."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.kube_helpers import create_node

pytestmark = pytest.mark.kube

SCRIPT = """
import json, sys
from app import create_app
from app.kube.api.access import Identity
from app.kube.api.configmap_doc import ConfigMapDoc
from app.kube.api.writer import NodeWriter
from app.web.process import of as process_of

kubeconfig, node, doc_name = sys.argv[1:]
app = create_app({"kubeconfig": kubeconfig, "in_cluster": "false", "history_store": "off"})
runtime = process_of(app).local
runtime.start()
cluster = runtime.cluster
assert cluster.cache.wait_synced(30)
assert app.test_client().get("/").status_code == 200
ops = [{"op": "add", "path": "/status/capacity/lean.example.com~1dongle", "value": "2"}]
written = NodeWriter(cluster.api, timeout=10).patch(node, ops, dry_run=False)
doc = ConfigMapDoc(cluster.api, "default", doc_name, 10)
doc.write({"a": "1"}, None)
data, version = doc.read()
# kube-testenv's token file names "viewer-token" (user viewer), who may not patch nodes
who = cluster.access.authenticate(Identity(token="viewer-token", mode="token"))  # a TokenReview
may = cluster.access.check(who, "patch", "nodes", "status")  # a SelfSubjectAccessReview
admin = cluster.access.authenticate(Identity(token="admin-token", mode="token"))
admin_may = cluster.access.check(admin, "patch", "nodes", "status")
print(json.dumps({
    "user": who.user,
    "may": may,
    "admin_may": admin_may,
    "capacity": written["status"]["capacity"].get("lean.example.com/dongle"),
    "doc": data,
    "generated": sorted(m for m in sys.modules if m.startswith("kubernetes.client.api.")),
}))
"""


def test_lists_pages_and_writes_import_no_generated_api_class(control_plane, core, uid):
    node = f"{uid}-n"
    create_node(core, node, {})
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(control_plane.kubeconfig), node, f"{uid}-doc"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["capacity"] == "2" and seen["doc"] == {"a": "1"}  # the raw requests did their work
    assert seen["user"] == "viewer" and seen["may"] is False and seen["admin_may"] is True
    assert seen["generated"] == []
