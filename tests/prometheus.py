"""A real Prometheus (Debian's `prometheus` package) on loopback, scraping the app every second
with the shipped alert rules loaded (extres_demo.prometheus starts it); queried through its HTTP
API."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from extres_demo.prometheus import PrometheusProcess
from tests.chart_helpers import CHART

ALERTS = CHART / "files" / "extres-alerts.yaml"


class Prometheus(PrometheusProcess):
    def __init__(self, work: Path, target: str, jobs: Mapping[str, str] | None = None) -> None:
        """``target``: the app's metrics (job extres); ``jobs``: more targets by job."""
        super().__init__(work, {"extres": target, **(jobs or {})}, rule_files=[ALERTS])

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
