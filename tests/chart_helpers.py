"""Rendering the Helm chart with helm-python-sdk (Helm v4 embedded; no helm binary)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import helm_python as helm
import yaml
from kubernetes import client

CHART = Path(__file__).resolve().parent.parent / "helm" / "extres"
NAMESPACE = "extres"

IMPERSONATE = {
    "auth": {
        "mode": "impersonate",
        "trustedProxies": ["127.0.0.1/32"],
        "impersonate": {"users": ["alice", "bob"]},
    },
    "rbac": {"viewerGroups": ["extres-viewers"], "editorGroups": ["extres-editors"]},
}


def render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    chart = helm.Chart.load(CHART)
    out = chart.render(values or {}, name="extres", namespace=NAMESPACE, is_install=True)
    docs = []
    for path, text in sorted(out.items()):
        if path.endswith(".yaml"):
            docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def apply_rbac(api: client.ApiClient, docs: list[dict[str, Any]]) -> None:
    """Create the rendered ClusterRoles, Roles and their bindings, or replace them in place: an
    object is deleted and made again only when a binding's roleRef changes (it cannot be
    updated), so applying the same rendering twice never leaves a moment without the grant
    (the authorizer's cache would answer "no" in that moment)."""
    rbac = client.RbacAuthorizationV1Api(api)
    core = client.CoreV1Api(api)
    for namespace in {d["metadata"]["namespace"] for d in docs if d["kind"] in ("Role", "RoleBinding")}:
        try:  # the release's namespace, as `helm install --create-namespace` makes it
            core.create_namespace({"metadata": {"name": namespace}})
        except client.ApiException as exc:
            if exc.status != 409:
                raise
    ops = {
        "ClusterRole": ("cluster_role", False),
        "ClusterRoleBinding": ("cluster_role_binding", False),
        "Role": ("namespaced_role", True),
        "RoleBinding": ("namespaced_role_binding", True),
    }
    for doc in docs:
        if doc["kind"] not in ops:
            continue
        name = doc["metadata"]["name"]
        suffix, namespaced = ops[doc["kind"]]
        where = (doc["metadata"]["namespace"],) if namespaced else ()
        try:
            getattr(rbac, f"create_{suffix}")(*where, doc)
            continue
        except client.ApiException as exc:
            if exc.status != 409:
                raise
        current = api.sanitize_for_serialization(getattr(rbac, f"read_{suffix}")(name, *where))
        if "roleRef" in doc and current.get("roleRef") != doc["roleRef"]:
            getattr(rbac, f"delete_{suffix}")(name, *where)
            getattr(rbac, f"create_{suffix}")(*where, doc)
        else:
            version = current["metadata"]["resourceVersion"]
            body = {**doc, "metadata": {**doc["metadata"], "resourceVersion": version}}
            getattr(rbac, f"replace_{suffix}")(name, *where, body)
