"""The clusters this dashboard shows: the local one (in-cluster or a kubeconfig, as the settings
say) and the members whose kubeconfigs are in ``EXTRES_CLUSTERS_DIR`` (one file each, named by
the cluster; the chart mounts the member Secrets there). Each member's kubeconfig is read as
hostile (app.domain.member_kubeconfig) and, once accepted, is a runtime of its own
(app.runtime): its own watches, store, selector evaluator and metrics, connected with its own
credentials only. A refused one is named with its rule on the fleet page and in the log, its
kubeconfig never shown. Without members the dashboard is the one cluster, as it always was."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from app.domain import member_kubeconfig
from app.domain.member_kubeconfig import Refused
from app.runtime import Runtime

log = logging.getLogger(__name__)
MAX_MEMBERS = 50


class Fleet:
    def __init__(self, local: Runtime, members: dict[str, Runtime] | None = None) -> None:
        self.local = local
        self.members = dict(members or {})
        self.refused: list[Refused] = []

    @classmethod
    def of(cls, local: Runtime) -> Fleet:
        """The local runtime and the members its settings name (``clusters_dir``)."""
        fleet = cls(local)
        s = local.settings
        if s.clusters_dir:
            for name, text in _files(Path(s.clusters_dir)):
                fleet.add(name, text)
        return fleet

    def add(self, name: str, text: str | bytes) -> None:
        """A member from its kubeconfig ``text``, or its refusal (named, logged)."""
        s = self.local.settings
        try:
            if name == self.local.name or name in self.members:
                raise Refused(name, "name", "another cluster has this name")
            if len(self.members) >= MAX_MEMBERS:
                raise Refused(name, "count", f"at most {MAX_MEMBERS} member clusters")
            member = member_kubeconfig.read(
                name, text, insecure_allowed=name in s.clusters_insecure, loopback_allowed=s.clusters_loopback
            )
        except Refused as refused:
            log.warning("%s", refused)
            self.refused.append(refused)
            return
        # the member's own runtime: no history or sign-out list kept there; usage read from the
        # shared Prometheus, its series told apart by the cluster label (else none)
        prometheus = s.prometheus_url if s.prometheus_cluster_label else None
        settings = s.replaced(
            cluster_name=name, history_store="off", session_store=None, prometheus_url=prometheus
        )
        self.members[name] = Runtime(settings, member=member)

    def get(self, name: str | None) -> Runtime | None:
        """The runtime of cluster ``name`` (None or the local's name: the local one)."""
        if name is None or name == self.local.name:
            return self.local
        return self.members.get(name)

    def runtimes(self) -> list[Runtime]:
        """The local cluster's runtime first, then the members' by name."""
        return [self.local, *(self.members[name] for name in sorted(self.members))]

    def start(self) -> None:
        for runtime in self.runtimes():
            runtime.start()

    def stop(self) -> None:
        for runtime in self.runtimes():
            runtime.stop()


def _files(directory: Path) -> list[tuple[str, bytes]]:
    """Each member's (name, kubeconfig) in ``directory``: its regular files not starting with a
    dot (a Secret's volume keeps its own there), read only where they resolve inside it, a
    ``.yaml`` suffix not part of the name."""
    try:
        root = directory.resolve(strict=True)
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        log.warning("cannot read EXTRES_CLUSTERS_DIR %s: %s", str(directory)[:200], exc)
        return []
    found = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = Path(entry.path).resolve()
        if path.parent != root and root not in path.parents:
            log.warning("member file %s points outside EXTRES_CLUSTERS_DIR: not read", entry.name[:100])
            continue
        if not path.is_file():
            continue
        with open(path, "rb") as f:
            text = f.read(member_kubeconfig.MAX_BYTES + 1)
        found.append((entry.name.removesuffix(".yaml"), text))
    return found
