"""A real Prometheus (Debian's ``prometheus`` package) on loopback, for the demo, the tests and
the benches: it scrapes the targets given, by job, and loads the rule files given."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from extres_demo import testenv


def installed() -> str | None:
    return shutil.which("prometheus")


class PrometheusProcess:
    def __init__(
        self,
        work: Path,
        jobs: Mapping[str, str],
        rule_files: Sequence[Path] = (),
        interval: str = "1s",
        ready_timeout: float = 60,
    ) -> None:
        """``jobs``: job name -> its one target (host:port)."""
        binary = installed()
        if binary is None:
            raise FileNotFoundError("Debian's prometheus package is missing: scripts/dev setup installs it")
        work.mkdir(parents=True, exist_ok=True)
        self.port = testenv.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = work / "prometheus.yml"
        config.write_text(
            json.dumps(  # JSON is YAML
                {
                    "global": {"scrape_interval": interval, "evaluation_interval": interval},
                    "rule_files": [str(p) for p in rule_files],
                    "scrape_configs": [
                        {"job_name": job, "static_configs": [{"targets": [target]}]}
                        for job, target in jobs.items()
                    ],
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
            start_new_session=True,  # a Ctrl-C reaches whoever started it, who stops it
        )
        deadline = time.monotonic() + ready_timeout
        while True:
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"prometheus did not start: see {work / 'prometheus.log'}")
            time.sleep(0.3)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()
