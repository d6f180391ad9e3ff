"""The clusters this dashboard shows: the local one (in-cluster or a kubeconfig, as the settings
say) and the members whose kubeconfigs its sources give: the files of ``EXTRES_CLUSTERS_DIR``
(one each, named by the cluster; the chart mounts member Secrets there by name) and the Secrets
of ``EXTRES_CLUSTERS_NAMESPACE`` that carry the label ``EXTRES_CLUSTERS_SELECTOR`` names
(app.kube.api.member_secrets). Each member's kubeconfig is read as hostile
(app.domain.member_kubeconfig) and, once accepted, is a runtime of its own (app.runtime.cluster): its
own watches, store, selector evaluator and metrics, connected with its own credentials only. A
refused one is named with its rule on the fleet page and in the log, its kubeconfig never shown.

The sources are read again every ``RESCAN`` seconds (``sync``): a new member starts, one whose
kubeconfig changed is read again and its runtime replaced, one that is gone stops; a source
that cannot be read keeps the members it gave. ``members`` is replaced whole, never changed in
place, so a request reads one consistent set. Without members the dashboard is the one cluster,
as it always was."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from app.base import workers
from app.domain import member_kubeconfig
from app.domain.member_kubeconfig import Refused
from app.kube.api.errors import KubeError
from app.runtime.cluster import Runtime

log = logging.getLogger(__name__)
MAX_MEMBERS = 50
# labelled Secrets read at most: refused ones count toward this, never toward MAX_MEMBERS (10,000
# refused ones before a valid one hid it); each kubeconfig is kept to member_kubeconfig.MAX_BYTES
MAX_SECRETS = 200
RESCAN = 15.0  # seconds between two reads of the members' sources
Source = Callable[[], list[tuple[str, bytes]]]  # each member's (name, kubeconfig); raises when unread


class Unread(Exception):
    """A source that could not be read now: the members it gave last are kept."""


class Fleet:
    def __init__(
        self, local: Runtime, members: dict[str, Runtime] | None = None, sources: Sequence[Source] = ()
    ) -> None:
        self.local = local
        self.members = dict(members or {})
        self.refused: list[Refused] = []
        self._sources = tuple(sources)
        self._given: list[list[tuple[str, bytes]]] = [[] for _ in self._sources]  # each source's last read
        self._texts: dict[str, bytes] = {}  # each member's kubeconfig as it was read
        self._said: dict[str, bytes] = {}  # each refused one's, its refusal logged once
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._started = False

    @classmethod
    def of(cls, local: Runtime) -> Fleet:
        """The local runtime and the members its settings' sources give (the folder read now; the
        Secrets from ``start`` on, once the local cluster is connected)."""
        s = local.settings
        sources: list[Source] = []
        if s.clusters_dir:
            sources.append(partial(_files, Path(s.clusters_dir)))
        if (namespace := s.clusters_namespace) is not None:
            selector = s.clusters_selector
            sources.append(lambda: local.cluster.member_kubeconfigs(namespace, selector, MAX_SECRETS))
        fleet = cls(local, sources=sources)
        if s.clusters_dir:
            fleet.sync(only_files=True)
        return fleet

    def runtime_of(self, name: str, text: bytes) -> Runtime:
        """A member's runtime (not started) from its kubeconfig ``text``; Refused naming the rule."""
        s = self.local.settings
        if name == self.local.name:
            raise Refused(name, "name", "another cluster has this name")
        member = member_kubeconfig.read(
            name, text, insecure_allowed=name in s.clusters_insecure, loopback_allowed=s.clusters_loopback
        )
        # the member's own runtime: its capacity history kept in this cluster's store (named by
        # the member), no sign-out list there; usage read from the shared Prometheus, its series
        # told apart by the cluster label (else none)
        prometheus = s.prometheus_url if s.prometheus_cluster_label else None
        settings = s.replaced(
            cluster_name=name, history_store="off", session_store=None, prometheus_url=prometheus
        )
        return Runtime(settings, member=member, home=self.local)

    def sync(self, only_files: bool = False) -> None:
        """Read the sources again and make the members what they give: new ones added (started
        when the fleet is), changed ones read again and replaced, gone ones stopped. A refusal is
        logged once for the same kubeconfig. ``only_files``: the folder alone, the first source
        (read as the app is made; the Secrets wait for the local cluster's connection)."""
        with self._lock:
            for i, source in enumerate(self._sources[:1] if only_files else self._sources):
                try:
                    self._given[i] = source()
                except (KubeError, Unread) as exc:  # keep what it gave last
                    log.warning("member clusters not read again: %s", getattr(exc, "message", exc))
            refused: list[Refused] = []
            members: dict[str, Runtime] = {}
            gone = dict(self.members)
            for name, text in (entry for given in self._given for entry in given):
                try:
                    if name in members or any(r.cluster == name for r in refused):
                        raise Refused(name, "name", "another cluster has this name")
                    if len(members) >= MAX_MEMBERS:
                        raise Refused(name, "count", f"at most {MAX_MEMBERS} member clusters")
                    if name in gone and self._texts.get(name) == text:
                        members[name] = gone.pop(name)
                        continue
                    members[name] = runtime = self.runtime_of(name, text)
                except Refused as why:
                    if self._said.get(name) != text:
                        log.warning("%s", why)
                    self._said[name] = text
                    refused.append(why)
                    continue
                self._texts[name] = text
                if self._started:
                    runtime.start()
            self.members, self.refused = members, refused
            self._texts = {n: t for n, t in self._texts.items() if n in members}
            self._said = {n: t for n, t in self._said.items() if any(r.cluster == n for r in refused)}
        for name, runtime in gone.items():
            log.info("member cluster %s %s", name, "replaced" if name in members else "removed")
            runtime.stop()

    def get(self, name: str | None) -> Runtime:
        """The runtime of cluster ``name`` (None or the local's name: the local one); LookupError
        when there is none (a member removed since the request was routed, say)."""
        if name is None or name == self.local.name:
            return self.local
        found = self.members.get(name)
        if found is None:
            raise LookupError(f"No cluster named {name[:63]!r} (it may have been removed just now).")
        return found

    def runtimes(self) -> list[Runtime]:
        """The local cluster's runtime first, then the members' by name."""
        members = self.members
        return [self.local, *(members[name] for name in sorted(members))]

    def start(self) -> None:
        """Every runtime started, the local one first; then the sources read again every ``RESCAN``
        seconds (the first read at once: the Secrets are read from here on)."""
        for runtime in self.runtimes():
            runtime.start()
        self._started = True
        if self._sources:
            self.sync()
            workers.every("member clusters", RESCAN, self.sync, self._stop)

    def stop(self) -> None:
        """Every runtime stopped, the members first: their last history records are written
        through the local cluster's connection."""
        self._stop.set()
        with self._lock:
            self._started = False
            for runtime in reversed(self.runtimes()):
                runtime.stop()


def _files(directory: Path) -> list[tuple[str, bytes]]:
    """Each member's (name, kubeconfig) in ``directory``: its regular files not starting with a
    dot (a Secret's volume keeps its own there), read only where they resolve inside it, a
    ``.yaml`` suffix not part of the name."""
    try:
        root = directory.resolve(strict=True)
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError as exc:
        raise Unread(f"cannot read EXTRES_CLUSTERS_DIR {str(directory)[:200]}: {exc}") from None
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
