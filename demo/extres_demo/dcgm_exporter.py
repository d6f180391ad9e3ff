"""The dcgm-exporter stand-in served over HTTP (extres_demo.dcgm_standin: its exposition), for
the demo and the integration tests: a stand-in, not DCGM. It reads the cluster's GPU nodes (their
``nvidia.com/gpu`` capacity, as a device plugin advertises it) and the pods holding GPUs there,
at most every ``refresh`` seconds (the simulator's status exporter refreshes every 10 s), and a
Prometheus scrapes it at ``/metrics``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from kubernetes import client
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import Metric

from app.kube.api import raw
from extres_demo.dcgm_standin import families, holders_from_pods
from extres_demo.gpu_stack import GPU


class DcgmExporter:
    def __init__(self, api: client.ApiClient, port: int = 0, refresh: float = 10.0) -> None:
        self.api = api
        self.refresh = refresh
        self._families: list[Metric] = []
        self._read_at = 0.0
        self._lock = threading.Lock()
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        self.server, self.thread = start_http_server(port, addr="127.0.0.1", registry=registry)
        self.port = self.server.server_port
        self.target = f"127.0.0.1:{self.port}"

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            if time.monotonic() - self._read_at >= self.refresh:
                self._families = self._read()
                self._read_at = time.monotonic()
            return list(self._families)

    def _read(self) -> list[Metric]:
        nodes = raw.call(self.api, "GET", "/api/v1/nodes", 30)["items"]
        gpus = {}
        for n in nodes:
            count = str(((n.get("status") or {}).get("capacity") or {}).get(GPU, "0"))
            if count.isdigit() and int(count) > 0:
                gpus[n["metadata"]["name"]] = int(count)
        pods: list[Any] = raw.call(self.api, "GET", "/api/v1/pods", 30)["items"]
        holders = holders_from_pods(pods)
        return families({name: (count, holders.get(name, [])) for name, count in gpus.items()})

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
