"""``extres demo``: a local control plane, seeded, with the dashboard serving it."""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import tempfile
import threading
from pathlib import Path

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.serving import serve_app
from app.settings.config import Settings
from extres_demo import cluster, demo_queues, kueue, testenv
from extres_demo.dcgm_exporter import DcgmExporter
from extres_demo.prometheus import PrometheusProcess, installed

log = logging.getLogger("extres")


def demo(settings: Settings, state_dir: Path | None) -> None:
    """The demo until it is stopped; a state folder made here is removed then."""
    state = state_dir or Path(tempfile.mkdtemp(prefix="extres-demo-"))
    if testenv.built():
        log.info("starting a local control plane in %s", state)
    else:
        log.info(
            "building the local control plane first (about 10 minutes, once), then starting it in %s", state
        )
    plane = testenv.start(state)  # its parts in sessions of their own: a Ctrl-C reaches the dashboard only
    owner = os.getpid()
    stop = threading.Event()
    standin: threading.Thread | None = None
    exporter: DcgmExporter | None = None
    prometheus: PrometheusProcess | None = None
    queues: kueue.Kueue | None = None
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        cluster.seed(api)
        if os.environ.get("EXTRES_DEMO_QUEUES") == "1":  # Kueue beside it (built once, a few minutes)
            queues = kueue.start(plane, state / "kueue", api)
            demo_queues.seed_queues(api)
            log.info("Kueue runs beside the demo cluster: its queues are on the Pending and Queues pages")
        standin = cluster.run_standin(api, stop)
        usage: dict[str, object] = {}
        if settings.prometheus_url:
            log.info("GPU usage from %s, as set", settings.prometheus_url)
        elif installed():
            exporter = DcgmExporter(api)  # a stand-in for NVIDIA's dcgm-exporter: not DCGM
            prometheus = PrometheusProcess(
                state / "prometheus", {"dcgm-exporter": exporter.target}, interval="5s"
            )
            usage = {"prometheus_url": prometheus.url, "usage_refresh_seconds": 10}
            log.info("GPU usage: a Prometheus at %s scrapes the dcgm-exporter stand-in", prometheus.url)
        else:
            log.info(
                "GPU usage is off: install Debian's prometheus package (scripts/dev setup does) to see it"
            )
        log.info("demo cluster at %s; KUBECONFIG=%s", plane.server, plane.kubeconfig)
        print(f"extres demo: http://{settings.host}:{settings.port}/", flush=True)
        print(f"export KUBECONFIG={plane.kubeconfig}  # kubectl reaches the demo cluster", flush=True)
        # the demo cluster is a local toy on loopback: changes are on unless EXTRES_READ_ONLY says no
        read_only = settings.read_only if "EXTRES_READ_ONLY" in os.environ else False
        local = {
            "kubeconfig": str(plane.kubeconfig),
            "in_cluster": "false",
            "read_only": read_only,
            # the demo's history lives as long as its cluster: a key of its own unless one is set
            "history_key": settings.history_key or secrets.token_hex(32),
            # its GPU workloads carry a team label (extres_demo.cluster.TEAMS): GPU-hours per team
            "team_label": settings.team_label or cluster.TEAM_LABEL,
            **usage,
        }
        serve_app(settings.replaced(**local))
    finally:
        # gunicorn's worker is a fork of this process and unwinds through here when it exits:
        # only the process that started the control plane stops it, once the dashboard is down
        if os.getpid() == owner:
            stop.set()  # the kubelet stand-in first: it would only log the plane going away
            if standin is not None:
                standin.join(timeout=15)
            if prometheus is not None:
                prometheus.stop()
            if exporter is not None:
                exporter.stop()
            if queues is not None:
                queues.stop()
            plane.stop(now=state_dir is None)  # a state about to be removed needs no graceful end
            if state_dir is None:
                shutil.rmtree(state, ignore_errors=True)
            log.info("stopped")
