"""The README's run command with no cluster configured (``extres serve --or-demo``, as
``scripts/dev run``): a local control plane, a seeded cluster, the dashboard serving it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request

from extres_demo import testenv
from tests.helpers import eventually
from tests.kube_helpers import grid_cells


def test_demo_serves_the_seeded_cluster(tmp_path):
    port = testenv.free_port()
    temp = tmp_path / "tmp"  # the demo makes its state folder here, and removes it when stopped
    temp.mkdir()
    env = {**os.environ, "EXTRES_PORT": str(port), "TMPDIR": str(temp)}
    env.pop("EXTRES_DEMO_STATE_DIR", None)
    env["KUBECONFIG"] = str(tmp_path / "none")  # no kubeconfig (not ~/.kube/config either)
    out = tmp_path / "demo.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--or-demo"],
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def page():
            assert proc.poll() is None, out.read_text()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                    cells = grid_cells(resp.read().decode())
            except OSError as exc:
                raise AssertionError(f"not serving yet: {exc}") from exc
            # the controllers made the pods: dongle-reader's three replicas, 1 each, on node 1
            assert cells[("demo-node-1", "example.com/dongle", "requested")] == "3"
            return cells

        cells = eventually(page, timeout=180, interval=0.5)
        assert cells[("demo-node-3", "nvidia.com/gpu", "capacity")] == "4"  # a device plugin's, in status

        def dra_served():
            # inference's two pods hold 2 DRA devices each: allocated by the scheduler
            cells = page()
            assert cells[("*", "example.com/gpu", "capacity")] == "8DRA"
            assert cells[("*", "example.com/gpu", "free")] == "4"
            # tutoring's three pods hold a share each of demo-node-9's two shared GPUs (4 shares each)
            assert cells[("demo-node-9", "example.com/gpu-share", "capacity")] == "8DRA"
            assert cells[("demo-node-9", "example.com/gpu-share", "requested")] == "3"
            assert cells[("demo-node-9", "example.com/gpu-share", "free")] == "5"
            return cells

        eventually(dra_served, timeout=120, interval=0.5)
        assert cells[("*", "example.com/dongle", "capacity")] == "6"
        exports = [line for line in out.read_text().splitlines() if line.startswith("export KUBECONFIG=")]
        [state] = list(temp.glob("extres-demo-*"))
        assert exports == [f"export KUBECONFIG={state / 'kubeconfig'}  # kubectl reaches the demo cluster"]

        def get(path: str) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
                return resp.read().decode()

        # owners made by real controllers: a Deployment through its ReplicaSet, a StatefulSet
        workloads = get("/workloads/")
        assert 'data-workload="Deployment/dongle-reader"' in workloads
        assert 'data-workload="StatefulSet/fpga-db"' in workloads
        # the walkthrough's first step: nginx-deployment's pod waits for wgh/extended-cpu
        eventually(lambda: "Insufficient wgh/extended-cpu" in get("/pending/"), timeout=60, interval=0.5)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    # the demo's control plane is stopped with it, its folder removed, and it says so plainly
    assert list(temp.iterdir()) == []
    text = out.read_text()
    assert "stopped" in text and "building" not in text  # the binaries were cached already
    assert "Traceback" not in text
    # a quiet stop: the dashboard first, then the plane (its parts ignore the terminal's signal),
    # so nothing is left to warn of a server going away; stopped once, not by gunicorn's worker too
    after = text.split('"Handling signal: term"', 1)[1]
    assert '"level": "WARNING"' not in after, after
    assert text.count('"message": "stopped"') == 1
    # no access line per poll or page (a setting turns them on)
    assert '"logger": "gunicorn.access"' not in text
