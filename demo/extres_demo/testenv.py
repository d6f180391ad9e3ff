"""Drive kube-testenv (beside this module): a local control plane (etcd, kube-apiserver, kube-scheduler,
kube-controller-manager) with kwok playing the kubelets.

Used by the test suite and by ``extres demo``. The binaries are built once from Go modules
(the version: ``EXTRES_KUBE_VERSION``, default the newest the script knows) and cached outside
the repository.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parent / "kube-testenv"


@dataclass(frozen=True)
class ControlPlane:
    state_dir: Path
    port: int

    @property
    def kubeconfig(self) -> Path:
        return self.state_dir / "kubeconfig"

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubectl(self) -> Path:
        """The kubectl built with this version's control plane."""
        version = (self.state_dir / "version").read_text().strip()
        out = _script(
            "bindir", env={**os.environ, "EXTRES_KUBE_VERSION": version}, capture_output=True, text=True
        )
        return Path(out.stdout.strip()) / "kubectl"

    def stop(self, now: bool = False) -> None:
        """Stop every part; ``now``: at once (SIGKILL), for a state about to be thrown away."""
        _script("stop", self.state_dir, *(["--now"] if now else []), check=False)

    # fault tests: one part down, then up again as it was
    def down(self, part: str) -> None:
        _script("down", self.state_dir, part)

    def up(self, part: str) -> None:
        _script("up", self.state_dir, part)

    def compact(self) -> int:
        """Compact etcd's history to its current revision; the revision."""
        return int(_script("compact", self.state_dir, capture_output=True, text=True).stdout.strip())


def _script(*args: object, check: bool = True, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], check=check, **kwargs)


def version() -> str:
    """The Kubernetes version a control plane started now gets (EXTRES_KUBE_VERSION or the newest)."""
    return (os.environ.get("EXTRES_KUBE_VERSION") or "").lstrip("v") or _script(
        "versions", capture_output=True, text=True
    ).stdout.split()[0]


def built() -> bool:
    """Whether this version's binaries are built and cached already."""
    out = _script("bindir", check=False, capture_output=True, text=True)
    return out.returncode == 0 and (Path(out.stdout.strip()) / "kubectl").is_file()


def free_port() -> int:
    """A port whose +10000 and +10001 neighbours (etcd) are free too, all below the kernel's
    ephemeral range: polling a port there before its server listens can connect the socket to
    itself (TCP simultaneous open), and the poll then reads its own request back as the answer."""
    for _ in range(100):
        port = random.randint(10000, max(_ephemeral_low() - 10002, 12000))
        if all(_free(port + d) for d in (0, 10000, 10001)):
            return port
    raise RuntimeError("no free port found")


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start(
    state_dir: Path,
    port: int | None = None,
    scheduler: bool = False,
    watch_cache: bool = True,
    bare: bool = False,
    env: dict[str, str] | None = None,
    watch_list: bool = True,
    audit: bool = False,
    admission: tuple[str, ...] = (),
) -> ControlPlane:
    """Start a control plane; ``bare``: etcd and kube-apiserver only (plus the scheduler if
    ``scheduler``), no controllers and no kwok; ``env``: added to its processes' environment;
    ``watch_list`` False: a kube-apiserver that does not stream lists (WatchList=false);
    ``audit``: every request's metadata (who, what, the code answered) in ``audit.log``;
    ``admission``: admission plugins turned on beside the defaults."""
    if not SCRIPT.is_file():
        raise RuntimeError(f"{SCRIPT} is missing: the package was installed without its scripts")
    port = port or int(os.environ.get("EXTRES_TESTENV_PORT", "0")) or free_port()
    options = (
        ("--scheduler", scheduler),
        ("--no-watch-cache", not watch_cache),
        ("--bare", bare),
        ("--no-watch-list", not watch_list),
        ("--audit", audit),
    )
    flags = [f for f, on in options if on]
    if admission:
        flags.append(f"--admission={','.join(admission)}")
    _script("start", state_dir, port, *flags, stdout=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    return ControlPlane(Path(state_dir).resolve(), port)


def start_scheduler(plane: ControlPlane) -> None:
    _script("scheduler", plane.state_dir)
