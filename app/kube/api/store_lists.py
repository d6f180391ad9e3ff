"""A kind's list taken into the Store, in pages or streamed: the first list of pods is counted in
as it arrives (pages show what nodes offer at once, and requested as it rises, marked as still
counting); any other list, and every relist, is built off to the side and swapped in whole. The
objects that cannot be read are left out and named (``app.kube.wire.reading``)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

from app.kube.api.errors import KubeError
from app.kube.api.listing import Listed, Requests, initial_events_end
from app.kube.api.watch_wire import Event, raise_for
from app.kube.state.store import Store
from app.kube.wire.reading import Reader, UnreadableLog


class StoreLists:
    def __init__(
        self,
        store: Store,
        requests: Requests,
        unreadable: UnreadableLog,
        freeze_gc: bool,
        on_sync: Callable[[str], None],
    ) -> None:
        """``on_sync``: called with the kind after each (re)list is in."""
        self.store = store
        self.requests = requests
        self.unreadable = unreadable
        self.freeze_gc = freeze_gc
        self.on_sync = on_sync

    def paged(self, kind: str, reader: Reader[Any, Any], first: bool) -> str:
        """List ``kind`` in pages, each projected as it arrives; returns the list's resourceVersion.
        ``first``: no list of it is in yet."""
        listed = self._listed(kind, first)

        def take(data: bytearray) -> None:
            page = reader.page(data)
            listed.take(page.views, page.unreadable)
            listed.flush()  # a page goes in whole as it arrives

        rv = self.requests.pages(kind, take)
        self._swap(kind, listed)
        return rv

    def streamed(self, kind: str, reader: Reader[Any, Any], events: Iterator[Event], first: bool) -> str:
        """A streamed list: every object arrives as an event and is projected as it comes, up to the
        bookmark that ends the list; then they go in. Returns the version the same stream goes
        on from, as the watch."""
        listed = self._listed(kind, first)
        for event in events:
            raise_for(event)
            if event.type == "BOOKMARK":
                end = initial_events_end(event.object)
                if end is not None:
                    self._swap(kind, listed)
                    return end
                continue
            view, _, problem = reader.one(event.object)
            listed.take([view] if view is not None else [], [problem] if problem is not None else [])
        raise KubeError("The API server ended the list's stream before every object arrived.", 0, "")

    def _listed(self, kind: str, first: bool) -> Listed:
        """Where a list's objects go: counted in as they arrive for the first list of pods, else
        aside."""
        if kind == "pods" and first:
            self.store.start_counting()
            return Listed(kind, into=self.store.count_pods)
        return Listed(kind)

    def _swap(self, kind: str, listed: Listed) -> None:
        whole = listed.whole
        if whole is None:
            self.store.counted()
        else:
            self.store.replace(kind, whole)
        self.unreadable.replace(kind, listed.unreadable)
        if self.freeze_gc:
            # What a list brought in lives until the next relist: move it out of the collector's
            # sight, so full collections no longer traverse the whole cache (objects are still
            # freed by reference counting when an event replaces them).
            gc.freeze()
        self.on_sync(kind)
