"""`extres demo`: a local control plane, a seeded cluster, the dashboard serving it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request

from app import testenv
from tests.conftest import eventually
from tests.kube_helpers import grid_cells


def test_demo_serves_the_seeded_cluster(tmp_path):
    port = testenv.free_port()
    env = {**os.environ, "EXTRES_PORT": str(port)}
    env.pop("KUBECONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "demo", "--state-dir", str(tmp_path / "demo")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def page():
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else "exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                    cells = grid_cells(resp.read().decode())
            except OSError as exc:
                raise AssertionError(f"not serving yet: {exc}") from exc
            # the seeded pods are counted: dongle-reader-1 (2) + dongle-reader-2 (1) on node 1
            assert cells[("demo-node-1", "example.com/dongle", "requested")] == "3"
            return cells

        cells = eventually(page, timeout=120, interval=0.5)
        assert cells[("demo-node-3", "nvidia.com/gpu", "capacity")] == "4"
        assert cells[("*", "example.com/dongle", "capacity")] == "6"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    # the demo's control plane is stopped with it
    assert not (tmp_path / "demo" / "apiserver.pid").exists()
