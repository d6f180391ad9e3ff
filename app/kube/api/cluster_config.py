"""Where the cluster is: in-cluster, or a kubeconfig (and its context). Asking whether one is
configured imports no client: gunicorn's master asks it, and stays small (docs/performance.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from app.domain.member_kubeconfig import Member


@dataclass(frozen=True)
class ClusterConfig:
    in_cluster: str = "auto"  # auto | true | false
    kubeconfig: str | None = None
    context: str | None = None
    member: Member | None = None  # a member cluster: its checked kubeconfig, nothing else read


def kubeconfig_paths(explicit: str | None) -> list[str]:
    if explicit:
        return [explicit]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [p for p in env.split(os.pathsep) if p]
    return [str(Path.home() / ".kube" / "config")]


def cluster_configured(cfg: ClusterConfig) -> bool:
    if cfg.member is not None or cfg.in_cluster == "true":
        return True
    if cfg.in_cluster == "auto" and os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    return any(Path(p).is_file() for p in kubeconfig_paths(cfg.kubeconfig))
