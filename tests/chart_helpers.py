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
    """Create (or replace) the rendered ClusterRoles and ClusterRoleBindings."""
    rbac = client.RbacAuthorizationV1Api(api)
    for doc in docs:
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind == "ClusterRole":
            create, delete = rbac.create_cluster_role, rbac.delete_cluster_role
        elif kind == "ClusterRoleBinding":
            create, delete = rbac.create_cluster_role_binding, rbac.delete_cluster_role_binding
        elif kind in ("Role", "RoleBinding"):
            ns = doc["metadata"]["namespace"]
            if kind == "Role":
                create = lambda d, ns=ns: rbac.create_namespaced_role(ns, d)  # noqa: E731
                delete = lambda n, ns=ns: rbac.delete_namespaced_role(n, ns)  # noqa: E731
            else:
                create = lambda d, ns=ns: rbac.create_namespaced_role_binding(ns, d)  # noqa: E731
                delete = lambda n, ns=ns: rbac.delete_namespaced_role_binding(n, ns)  # noqa: E731
        else:
            continue
        try:
            create(doc)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            delete(name)  # a binding's roleRef cannot change: replace the object whole
            create(doc)
