"""Ten hostile member clusters at once (one stand-in API server on a local CA, tests/hostile_member.py):
every list answered with 0.7 MB of gzip that inflates to 700 MiB, every watch with 410 Gone to
force the relist. Served as in production (``extres serve``: gunicorn's master and one worker),
the worker stays under the chart's small preset (384 MiB) throughout, /healthz answers, and the
Fleet page marks every member "refused: answer too large" while asking it less and less often."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from extres_demo import testenv
from tests.helpers import UNREACHABLE, repo_root, wait_until_serving
from tests.hostile_member import hostile
from tests.integration.test_slow_readers import worker_rss_mib

pytestmark = pytest.mark.waits
MEMBERS = [f"m{i}" for i in range(10)]


def test_ten_members_sending_gzip_bombs_never_take_the_worker_past_its_limit(tmp_path: Path) -> None:
    (tmp_path / "kubeconfig").write_text(UNREACHABLE)
    folder = tmp_path / "members"
    folder.mkdir()
    port = testenv.free_port()
    with hostile(tmp_path) as member:
        for name in MEMBERS:
            (folder / name).write_text(member.kubeconfig(name))
        env = {**os.environ, "EXTRES_KUBECONFIG": str(tmp_path / "kubeconfig"), "EXTRES_IN_CLUSTER": "false",
               "EXTRES_PORT": str(port), "EXTRES_METRICS_PORT": "0", "EXTRES_LOG_LEVEL": "ERROR",
               "EXTRES_TEMPLATE_CACHE": "off", "EXTRES_CLUSTERS_DIR": str(folder),
               "EXTRES_CLUSTERS_LOOPBACK": "true", "EXTRES_HISTORY_STORE": "off"}  # fmt: skip
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "extres"), "serve"], cwd=repo_root(), env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(server, f"{base}/healthz", timeout=30)
            most, answered, page = 0.0, 0, ""
            end = time.monotonic() + float(os.environ.get("HOLD_SECONDS", "45"))
            while time.monotonic() < end:
                with urllib.request.urlopen(f"{base}/fleet/", timeout=10) as resp:
                    page = resp.read().decode()
                try:
                    with urllib.request.urlopen(f"{base}/healthz", timeout=3) as resp:
                        answered += resp.status == 200
                except OSError:
                    pass
                most = max(most, worker_rss_mib(server.pid))
                if os.environ.get("SHOW_RSS"):
                    print(f"{worker_rss_mib(server.pid):.0f}", end=" ", flush=True)
                time.sleep(0.5)
            lists = member.lists
            time.sleep(10)
            later = member.lists - lists  # asked less and less often
            most = max(most, worker_rss_mib(server.pid))
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
    found = BeautifulSoup(page, "html.parser")
    states = {r["data-cluster"]: r for r in found.select("tr[data-cluster][data-state]")}
    print(f"\nworker at most {most:.0f} MiB; {lists} lists asked in 45 s, {later} in the next 10 s")
    assert most < 384
    assert answered >= 40
    for name in MEMBERS:
        assert states[name]["data-state"] == "refused", states[name].get_text(" ", strip=True)
        assert "refused: answer too large" in states[name].get_text(" ", strip=True)
    assert later < lists / 4
