"""Start: from exec to /healthz, and what gunicorn's master and worker import on the way, printed.

    python bench/start.py              # 9 starts, then one start with -X importtime
    python bench/start.py --runs 21

``extres serve`` (with what the image installs, ``tools.shipped_serve``) is started against a
cluster that cannot be reached (so the time is the start alone, not a busy API server's),
/healthz asked every 5 ms, ``--runs`` times: the median and the range. Then one more start with
``-X importtime``: each module's own import time, split into what gunicorn's master imports
(before it forks the worker) and what the worker imports after (the worker logs "Booting
worker" first thing after the fork), summed per top-level package, the biggest first. The
worker's part includes what its connection thread loads after /healthz has answered (the
Kubernetes client): those packages are marked. The app byte-compiled first, as the image has
it. Seconds are this machine's; compare commits in one run.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import tools  # noqa: E402
from bench.first_answer import _serve, _stop, _until_healthy, unreachable  # noqa: E402

IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
# what the worker has loaded once it answers /healthz: the app built, one request served
BUILT = """
import json, sys
from app import create_app
app = create_app({"kubeconfig": sys.argv[1], "in_cluster": "false", "history_store": "off"})
assert app.test_client().get("/healthz").status_code == 200
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def start(kubeconfig: Path, importtime: bool = False) -> tuple[float, str]:
    """Seconds from exec to /healthz answering 200; with ``importtime``, the processes' stderr."""
    with tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        proc, base = _serve(kubeconfig, {"PYTHONPROFILEIMPORTTIME": "1"} if importtime else None, err)
        try:
            _until_healthy(proc, base)
            up = time.perf_counter() - t
            if importtime:
                time.sleep(3)  # the connection thread loads the client after /healthz
        finally:
            _stop(proc)
        err.seek(0)
        return up, err.read()


def per_package(lines: list[str]) -> tuple[Counter[str], int]:
    """Each top-level package's summed own import time (microseconds), and the modules counted."""
    spent: Counter[str] = Counter()
    count = 0
    for line in lines:
        m = IMPORT_LINE.match(line)
        if m:
            spent[m[4].split(".")[0]] += int(m[1])
            count += 1
    return spent, count


def built(kubeconfig: Path) -> set[str]:
    """The top-level packages loaded by building the app and answering /healthz."""
    python = tools.shipped_serve()[0]
    out = subprocess.run(
        [python, "-c", BUILT, str(kubeconfig)], env=tools.shipped_env(), capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def show(title: str, lines: list[str], top: int, before: set[str] | None = None) -> None:
    """``before``: the packages loaded before /healthz answers; the others are marked."""
    spent, count = per_package(lines)
    print(f"{title}: {count} modules, {sum(spent.values()) / 1e6:.3f} s of own import time")
    for name, us in spent.most_common(top):
        late = before is not None and name not in before
        mark = "  (after /healthz: the connection thread)" if late else ""
        print(f"  {us / 1e6:7.3f} s  {name}{mark}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=9)
    p.add_argument("--top", type=int, default=15, help="packages printed per process")
    a = p.parse_args()
    tools.header("start.py")
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "app")], check=True, stdout=subprocess.DEVNULL
    )
    with unreachable() as kubeconfig:
        ups = [start(kubeconfig)[0] for _ in range(a.runs)]
        print(
            f"exec to /healthz: median {statistics.median(ups):.3f} s over {a.runs} starts "
            f"(min {min(ups):.3f}, max {max(ups):.3f})"
        )
        up, err = start(kubeconfig, importtime=True)
        before = built(kubeconfig)
    lines = err.splitlines()
    fork = next((i for i, line in enumerate(lines) if "Booting worker" in line), len(lines))
    print(f"with -X importtime: /healthz at {up:.3f} s")
    show("gunicorn's master, before the fork", lines[:fork], a.top)
    show("the worker, after the fork", lines[fork:], a.top, before)


if __name__ == "__main__":
    main()
