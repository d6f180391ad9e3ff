"""Ten hostile member clusters at once (one stand-in API server on a local CA, tests/hostile_member.py):
every list answered with 0.7 MB of gzip that inflates to 700 MiB, every watch with 410 Gone to
force the relist. Served as in production (``extres serve``: gunicorn's master and one worker),
the worker stays under the chart's small preset (384 MiB) throughout, /healthz answers, and the
Fleet page marks every member "refused: answer too large" while asking it less and less often."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.hostile_member import hostile
from tests.web.test_intake import Served

pytestmark = pytest.mark.waits
MEMBERS = [f"m{i}" for i in range(10)]
HOLD = 45.0  # seconds the Fleet page is asked while the members answer with bombs


def test_ten_members_sending_gzip_bombs_never_take_the_worker_past_its_limit(tmp_path: Path) -> None:
    folder = tmp_path / "members"
    folder.mkdir()
    with hostile(tmp_path) as member:
        for name in MEMBERS:
            (folder / name).write_text(member.kubeconfig(name))
        server = Served(tmp_path, EXTRES_CLUSTERS_DIR=str(folder), EXTRES_CLUSTERS_LOOPBACK="true",
                        EXTRES_HISTORY_STORE="off", EXTRES_LOG_LEVEL="ERROR")  # fmt: skip
        try:
            most, answered, page = 0.0, 0, ""
            end = time.monotonic() + HOLD
            while time.monotonic() < end:
                with urllib.request.urlopen(f"{server.url}/fleet/", timeout=10) as resp:
                    page = resp.read().decode()
                try:
                    with urllib.request.urlopen(f"{server.url}/healthz", timeout=3) as resp:
                        answered += resp.status == 200
                except OSError:
                    pass
                most = max(most, server.worker_rss_mib())
                time.sleep(0.5)
            lists = member.lists
            time.sleep(10)
            later = member.lists - lists  # asked less and less often
            most = max(most, server.worker_rss_mib())
        finally:
            server.stop()
    found = BeautifulSoup(page, "html.parser")
    states = {r["data-cluster"]: r for r in found.select("tr[data-cluster][data-state]")}
    print(f"\nworker at most {most:.0f} MiB; {lists} lists asked in 45 s, {later} in the next 10 s")
    assert most < 384
    assert answered >= 40
    for name in MEMBERS:
        assert states[name]["data-state"] == "refused", states[name].get_text(" ", strip=True)
        assert "refused: answer too large" in states[name].get_text(" ", strip=True)
    assert later < lists / 4
