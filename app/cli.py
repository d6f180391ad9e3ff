"""The ``extres`` command: ``extres serve`` and ``extres demo``."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from app.base import logs
from app.serving import serve_app
from app.settings.config import Settings

log = logging.getLogger("extres")


DESCRIPTIONS = {
    "serve": "Serve the dashboard for the cluster of the in-cluster config or $KUBECONFIG.",
    "demo": "Start a local Kubernetes control plane (etcd, kube-apiserver, kube-scheduler, "
    "kube-controller-manager; kwok plays the kubelets), seed it with nodes and workloads, and serve "
    "the dashboard. It prints one line, `export KUBECONFIG=<state dir>/kubeconfig`: run it in "
    "another shell and kubectl reaches the demo cluster. The control plane stops with the dashboard.",
}


def main(argv: list[str] | None = None) -> int:
    """The command; a Ctrl-C (while the demo's control plane is built or seeded, say) ends it
    with a line, not a traceback: what it started is stopped on the way out."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("extres: stopped (Ctrl-C)", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    from app import version

    parser = argparse.ArgumentParser(prog="extres", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("serve", "serve the dashboard (in-cluster, or $KUBECONFIG)"),
        ("demo", "start a local control plane, seed a demo cluster, serve the dashboard"),
    ):
        p = sub.add_parser(name, help=text, description=DESCRIPTIONS[name])
        p.add_argument("--host", help="listen address (EXTRES_HOST)")
        p.add_argument("--port", type=int, help="listen port (EXTRES_PORT)")
        if name == "serve":
            p.add_argument("--context", help="kubeconfig context (EXTRES_CONTEXT)")
            p.add_argument(
                "--or-demo",
                action="store_true",
                help="with no cluster configured, run the demo cluster instead (scripts/dev run)",
            )
        else:
            p.add_argument("--state-dir", type=Path, help="where the control plane keeps its state")
    args = parser.parse_args(argv)
    overrides = {k: v for k in ("host", "port", "context") if (v := getattr(args, k, None)) is not None}
    try:
        settings = Settings.from_env(**overrides)
    except ValueError as exc:
        parser.error(str(exc))
    logs.configure(settings.log_level, settings.access_log)
    if args.command == "serve":
        from app.kube.api.cluster_config import ClusterConfig, cluster_configured

        if cluster_configured(ClusterConfig(settings.in_cluster, settings.kubeconfig, settings.context)):
            serve_app(settings)
            return 0
        if not args.or_demo:
            print(NO_CLUSTER, file=sys.stderr)
            return 2
        log.warning("no in-cluster config and no kubeconfig: running the built-in demo cluster")
    demo = _demo()
    if demo is None:
        print("extres demo needs the demo package: pip install 'extres[demo]'", file=sys.stderr)
        return 2
    demo(settings, getattr(args, "state_dir", None) or _env_path("EXTRES_DEMO_STATE_DIR"))
    return 0


def _demo() -> Any:
    """The demo, where a package offers it (the ``extres.demo`` entry point of extres-demo): the
    app itself never names that package."""
    found = entry_points(group="extres.demo", name="demo")
    return next(iter(found)).load() if found else None


NO_CLUSTER = (
    "extres serve: no in-cluster config and no kubeconfig ($KUBECONFIG, ~/.kube/config).\n"
    "Point EXTRES_KUBECONFIG or KUBECONFIG at a cluster, or start the built-in demo cluster:\n"
    "  extres demo        (with the demo package: pip install 'extres[demo]')"
)


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


if __name__ == "__main__":
    sys.exit(main())
