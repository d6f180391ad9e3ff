"""A real Prometheus (Debian's `prometheus` package) on loopback, scraping the app every second
with the shipped alert rules loaded; queried through its HTTP API."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from extres_demo import testenv
from tests.chart_helpers import CHART
from tests.conftest import wait_until_serving

ALERTS = CHART / "files" / "extres-alerts.yaml"


class Prometheus:
    def __init__(self, work: Path, target: str) -> None:
        binary = shutil.which("prometheus")
        assert binary, "Debian's prometheus package is missing: scripts/dev setup installs it"
        self.port = testenv.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = work / "prometheus.yml"
        config.write_text(
            json.dumps(  # JSON is YAML
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(ALERTS)],
                    "scrape_configs": [{"job_name": "extres", "static_configs": [{"targets": [target]}]}],
                }
            )
        )
        self.log = (work / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={work / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-lifecycle",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_until_serving(self.proc, self.url + "/-/ready", timeout=60, interval=0.3)

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as resp:
            body = json.load(resp)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
        """An instant query's vector: labels (without job/instance) -> value."""
        out = {}
        for sample in self.api("query", query=expr)["result"]:
            labels = tuple(
                sorted((k, v) for k, v in sample["metric"].items() if k not in ("job", "instance"))
            )
            out[labels] = float(sample["value"][1])
        return out

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()
