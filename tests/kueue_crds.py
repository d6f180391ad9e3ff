"""Kueue's own CRDs (from the manager's build, ``extres_demo.kueue.build``) cut to one version and
installed with no manager: for tests that write Kueue's objects, status included, themselves,
playing Kueue's part (they say so)."""

from __future__ import annotations

from typing import Any

import yaml
from kubernetes import client

from extres_demo import kueue
from tests.helpers import eventually

GROUP = "kueue.x-k8s.io"
KINDS = ("clusterqueues", "localqueues", "resourceflavors", "workloads")


def install(api: client.ApiClient, version: str) -> None:
    """Kueue's CRDs of ``KINDS`` serving ``version`` only (no conversion webhook: nothing to convert)."""
    extensions = client.ApiextensionsV1Api(api)
    for kind in KINDS:
        crd: dict[str, Any] = yaml.safe_load((kueue.build() / "crds" / f"{GROUP}_{kind}.yaml").read_text())
        crd["spec"]["versions"] = [
            {**v, "served": True, "storage": True} for v in crd["spec"]["versions"] if v["name"] == version
        ]
        crd["spec"].pop("conversion", None)
        extensions.create_custom_resource_definition(crd)

    def established() -> bool:
        for kind in KINDS:
            status = extensions.read_custom_resource_definition(f"{kind}.{GROUP}").status
            if not any(
                c.type == "Established" and c.status == "True" for c in (status.conditions or ()) if status
            ):
                return False
        return True

    eventually(established, timeout=30)
