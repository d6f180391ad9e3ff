"""The app served by gunicorn (as in the container), for tests that need a real server."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from extres_demo import testenv
from tests.helpers import repo_root, wait_until_serving


class Server:
    def __init__(self, plane: testenv.ControlPlane, ready_timeout: float = 30, **env: str) -> None:
        self.port = testenv.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.metrics_port = testenv.free_port()
        self.metrics_url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        full = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "EXTRES_HOST": "127.0.0.1",
            "EXTRES_PORT": str(self.port),
            "EXTRES_METRICS_PORT": str(self.metrics_port),
            "EXTRES_KUBECONFIG": str(plane.kubeconfig),
            "EXTRES_IN_CLUSTER": "false",
            "EXTRES_COOKIE_SECURE": "false",  # plain http on loopback
            "EXTRES_READ_ONLY": "false",  # service-account mode writes only when asked to
            "EXTRES_HISTORY_KEY": "the tests' history key, at least 32 bytes",
            **env,
        }
        self.proc = subprocess.Popen(
            ["gunicorn", "--config", "app/serving/gunicorn_conf.py", "app:create_app()"],
            cwd=repo_root(),
            env=full,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: kill() takes the workers too
        )
        try:
            wait_until_serving(self.proc, self.url + "/readyz", timeout=ready_timeout)
        except BaseException:
            self.kill()  # never left serving behind a failed start
            raise

    def kill(self) -> None:
        """SIGKILL the master and its workers at once: a crash, nothing cleans up."""
        with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
