"""``extres demo``: a local control plane, seeded, with the dashboard serving it."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

from app.cli import serve_app
from app.config import Settings
from app.kube.client import ClusterConfig, api_client, load_configuration
from extres_demo import cluster, testenv

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
    plane = testenv.start(state)
    try:
        api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
        cluster.seed(api)
        stop = threading.Event()
        cluster.run_standin(api, stop)
        log.info("demo cluster at %s; KUBECONFIG=%s", plane.server, plane.kubeconfig)
        print(f"extres demo: http://{settings.host}:{settings.port}/", flush=True)
        print(f"export KUBECONFIG={plane.kubeconfig}  # kubectl reaches the demo cluster", flush=True)
        # the demo cluster is a local toy on loopback: changes are on unless EXTRES_READ_ONLY says no
        read_only = settings.read_only if "EXTRES_READ_ONLY" in os.environ else False
        local = {"kubeconfig": str(plane.kubeconfig), "in_cluster": "false", "read_only": read_only}
        serve_app(Settings(**{**vars(settings), **local}))
    finally:
        plane.stop()
        if state_dir is None:
            shutil.rmtree(state, ignore_errors=True)
        log.info("stopped")
