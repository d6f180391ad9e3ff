"""The viewer: what this request's user may do and see, asked once per request and read by the
views and templates alike (``viewer`` in every template). One place answers "may this user
change nodes", "may they read DRA objects", "how fresh is what they see", "who sets this
resource": no page asks the runtime (app.runtime.cluster) or another blueprint for it; views reach the runtime
as ``viewer().runtime``."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING

from flask import abort, current_app, g

from app.domain.gpu_usage import Reading
from app.domain.ownership import Ownership
from app.kube.api.errors import KubeError
from app.kube.api.freshness import Freshness
from app.kube.wire.reading import Unreadable
from app.runtime import reads
from app.runtime.cluster import Runtime
from app.usage.poller import UsageStatus
from app.web import clusters, process, security

if TYPE_CHECKING:
    from app.web.render_cache import RenderCaches

DRA_READS = (("list", "resource.k8s.io/deviceclasses"), ("list", "resource.k8s.io/resourceslices"))


class Viewer:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @property
    def why_no_changes(self) -> str:
        """Why this page offers no change (for a reader who may not make one), in a sentence."""
        if not current_app.config["EXTRES_WRITES"]:
            return "This dashboard is read-only here (EXTRES_READ_ONLY): no one changes nodes through it."
        if not self.freshness.synced:
            return "Changes are offered once every pod is counted (a change's impact needs them all)."
        return (
            f"{security.identity().label or 'You'} may view only: changing a node's extended resources "
            "takes the right to patch nodes/status (the chart's extres-editor role)."
        )

    @cached_property
    def may_write(self) -> bool:
        """Whether to offer changes: writes are on here, every pod has been counted (a change's
        impact needs them all), the user is verified, and may patch nodes/status (a
        SelfSubjectAccessReview, cached by the access checker)."""
        try:
            return bool(
                current_app.config["EXTRES_WRITES"]
                and self.freshness.synced
                and security.verified()
                and self.runtime.cluster.access.can_edit(security.identity())
            )
        except KubeError:
            return False

    @cached_property
    def may_read_devices(self) -> bool:
        """Whether the user may read DRA objects: without the right, pages show a note instead."""
        if self.runtime.settings.auth_mode == "service-account":
            return True
        access, who = self.runtime.cluster.access, security.identity()
        return all(access.allowed(who, verb, resource) for verb, resource in DRA_READS)

    @cached_property
    def freshness(self) -> Freshness:
        """How fresh what this request shows is (one answer for a page and its fragment)."""
        return reads.freshness(self.runtime)

    @cached_property
    def pending_count(self) -> int:
        """Unschedulable pods, for the navigation badge (none while pods are still being counted)."""
        return reads.pending_count(self.runtime) if self.freshness.synced else 0

    @cached_property
    def sick_count(self) -> int:
        """Devices a device plugin reports unhealthy, for the navigation badge (none while pods
        are still being counted)."""
        return sum(s.devices for s in reads.sick(self.runtime)) if self.freshness.synced else 0

    @cached_property
    def idle_count(self) -> int:
        """GPUs held idle (pods under the idle threshold), for the navigation badge (none while
        pods are still being counted, or without usage)."""
        if not self.usage_on or not self.freshness.synced:
            return 0
        return sum(reads.idle_held(self.runtime, self.usage_reading).values())

    @cached_property
    def known_resources(self) -> list[str]:
        """The extended resource names this user may see; the resource pickers offer them."""
        try:
            return reads.known_names(self.runtime, self.may_read_devices)
        except KubeError:
            return []

    @cached_property
    def dra_state(self) -> str:
        return reads.dra_state(self.runtime)

    @cached_property
    def queues_on(self) -> bool:
        """Whether Kueue's objects are seen (the Queues page is linked only then)."""
        try:
            return reads.queues_served(self.runtime)
        except KubeError:
            return False

    @property
    def fleet_on(self) -> bool:
        """Whether other clusters are configured (the Fleet page is linked, pages name their cluster)."""
        fleet = process.of().fleet
        return bool(fleet.members or fleet.refused)

    @property
    def cluster(self) -> str:
        """The name of the cluster this page is about."""
        return self.runtime.name

    @property
    def cluster_names(self) -> list[str]:
        """Every cluster's name, the local one first (the header's switcher)."""
        return [r.name for r in process.of().fleet.runtimes()]

    @cached_property
    def gpu_hours_on(self) -> bool:
        """Whether any pod has held a GPU since this process began counting (the GPU-hours page
        is in the navigation then)."""
        return reads.gpu_hours_seen(self.runtime)

    @property
    def usage_on(self) -> bool:
        """Whether GPU usage is read at all (a Prometheus is set): without it no page shows any."""
        return self.runtime.usage is not None

    @cached_property
    def usage(self) -> UsageStatus | None:
        """GPU usage as last read (one answer for a page and its fragment); None when off."""
        return reads.usage_status(self.runtime)

    def usage_covers(self, resources: Iterable[str]) -> bool:
        """Whether a usage mapping reads any of ``resources`` (a node without GPUs shows no usage)."""
        mappings = self.runtime.settings.mappings
        return any(m.covers(r) for r in resources for m in mappings)

    @property
    def usage_reading(self) -> Reading | None:
        """The last GPU usage reading (a stale one too: pages mark it so); None when none."""
        return self.usage.reading if self.usage is not None else None

    def unreadable_named(self) -> list[Unreadable]:
        return reads.unreadable_named(self.runtime)

    def render_caches(self) -> RenderCaches:
        """The render caches of this request's cluster (each cluster its own set)."""
        return process.of().render(self.runtime.name)

    def ownership(self, resource: str, node: str | None = None) -> Ownership:
        """Who sets ``resource`` (on ``node``) (app.domain.ownership)."""
        return reads.ownership(self.runtime, resource, node)


def viewer() -> Viewer:
    """This request's viewer (made on first use)."""
    found: Viewer | None = g.get("viewer")
    if found is None:
        try:
            runtime = process.of().fleet.get(clusters.asked())
        except LookupError as gone:
            abort(404, description=str(gone))
        found = g.viewer = Viewer(runtime)
    return found


def refuse_until_counted(said: str) -> None:
    """503 while the first list of pods is under way (or nothing is known yet): what needs every
    pod (a change's impact, an export's numbers) waits for the count, never given part of it.
    ``said`` is the message, with ``{so_far}`` where the count so far goes."""
    fresh = viewer().freshness  # the request's one answer, which its page shows too
    if not fresh.synced:
        so_far = f" ({fresh.counting} so far)" if fresh.counting is not None else ""
        abort(503, description=said.format(so_far=so_far))
