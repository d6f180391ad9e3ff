"""Building an API client from in-cluster config or a kubeconfig. The Kubernetes client itself
(~0.3 s of imports) is loaded when the first one is built, not when this module is read: the
worker answers before it (see docs/performance.md, "Start")."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from urllib3 import Retry

from app.kube.api.cluster_config import ClusterConfig, cluster_configured, kubeconfig_paths
from app.kube.api.errors import NotConfigured

if TYPE_CHECKING:
    from kubernetes import client

__all__ = ["ClusterConfig", "api_client", "cluster_configured", "load_configuration"]


def load_configuration(cfg: ClusterConfig) -> client.Configuration:
    """In-cluster first (when available), then the kubeconfig with the chosen context."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    conf = client.Configuration()
    if cfg.member is not None:  # checked (app.domain.member_kubeconfig): no plugin, no file, its fields alone
        try:
            config.load_kube_config_from_dict(cfg.member.kubeconfig(), client_configuration=conf)
        except (ConfigException, OSError, ValueError) as exc:
            said = f"Cannot use cluster {cfg.member.name}'s kubeconfig: {str(exc)[:200]}"
            raise NotConfigured(said) from exc
        return conf
    if cfg.in_cluster == "true" or (cfg.in_cluster == "auto" and os.environ.get("KUBERNETES_SERVICE_HOST")):
        try:
            config.load_incluster_config(client_configuration=conf)
            return conf
        except ConfigException as exc:
            if cfg.in_cluster == "true":
                raise NotConfigured(f"In-cluster configuration failed: {exc}") from exc
    paths = [p for p in kubeconfig_paths(cfg.kubeconfig) if Path(p).is_file()]
    if not paths:
        raise NotConfigured(
            "No in-cluster configuration and no kubeconfig found "
            "(set EXTRES_KUBECONFIG or KUBECONFIG, or run `extres demo`)."
        )
    try:
        config.load_kube_config(config_file=paths[0], context=cfg.context, client_configuration=conf)
    except (ConfigException, OSError, ValueError) as exc:
        raise NotConfigured(f"Cannot use kubeconfig {paths[0]}: {exc}") from exc
    return conf


def api_client(conf: client.Configuration, headers: dict[str, str] | None = None) -> client.ApiClient:
    # Retry only failed connections (nothing was sent); never a request that may have been applied.
    # Nor a 429 or 503 with Retry-After, which urllib3 would wait out and retry for GET and PUT,
    # then report as a failed connection: the answer comes back as it is, as Busy with its wait.
    from kubernetes import client

    conf.retries = Retry(
        total=2, connect=2, read=0, status=0, other=0, redirect=0, respect_retry_after_header=False
    )
    api = client.ApiClient(conf)
    for key, value in (headers or {}).items():
        api.set_default_header(key, value)
    return api
