"""One cold sync (or its floor) in a fresh process, so memory figures start from a clean heap.

    python bench/sync_probe.py KUBECONFIG MODE [--pages] [--page-size N] [--all-pods]

Prints one JSON object:
  wire:  seconds for the cache's own paginated requests (nodes, then pods), each body read whole
         and skipped but for its continue token: the API server's and the wire's time, the real
         floor of any client that lists in pages
  stream-wire: the same for the cache's streamed lists (a watch with sendInitialEvents), each
         event's line read and skipped until the bookmark that ends the objects
  decode: the same, each page decoded by the cache's own decoder (the kept fields, msgspec) and
         dropped: the floor of decoding, nothing projected or kept
  floor: the same pages json.loads'ed: what a client decoding everything pays (older figures)
         (each begun again if a continue token expires; "restarts" counts them)
  sync:  seconds for the cache's own sync of nodes, then pods (streamed where the server offers
         it; --pages: in pages), each by the cache's own watch loop; RSS before, at the peak (VmHWM, reset
         just before the sync) and after; the cache's own size estimate
  trace: bytes the synced pods cache retains and the peak of traced allocation (tracemalloc)
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
from kubernetes import client

from app.base import workers
from app.kube.api.cache import ClusterCache
from app.kube.api.client import ClusterConfig, api_client, load_configuration
from app.kube.api.listing import initial_events_end
from app.kube.api.watch_wire import EVENT
from app.kube.wire.decoders import ObjectList

T = TypeVar("T")


def rss() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))


def peak() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def again_if_gone(fn: Callable[[], T], out: dict[str, Any]) -> T:
    """``fn`` again from the start when a list's continue token has outlived etcd's history (410),
    as the app's cache does; out["restarts"] counts them."""
    while True:
        try:
            return fn()
        except client.ApiException as exc:
            if exc.status != 410:
                raise
            out["restarts"] = out.get("restarts", 0) + 1


class _Loaded:
    """A page as json.loads gives it, its items where ``paged`` counts them."""

    def __init__(self, data: bytes) -> None:
        self.items = json.loads(data)["items"]


def floor(cache: ClusterCache) -> dict[str, int]:
    """The cache's own pages (nodes, then pods), each json.loads'ed whole: pods and bytes."""
    return paged(cache, lambda kind, data: _Loaded(data))


_LIST_META = msgspec.json.Decoder(ObjectList[msgspec.Raw])  # items kept as raw bytes, not decoded


def paged(cache: ClusterCache, decode: Callable[[str, bytes], Any]) -> dict[str, int]:
    """The cache's own paginated requests (``Requests.pages``), nodes then pods, each
    page given to ``decode`` (which returns the decoded list) and dropped."""
    out = {"pods": 0, "bytes": 0}
    for kind in ("nodes", "pods"):

        def take(data: bytes, kind: str = kind) -> None:
            listed = decode(kind, data)
            if kind == "pods":
                out["pods"] += len(listed.items or ())
                out["bytes"] += len(data)

        cache.requests.pages(kind, take)
    return out


def streamed(cache: ClusterCache) -> dict[str, int]:
    """The cache's own streamed lists, nodes then pods, each event's line read and skipped up to
    the bookmark that ends the objects."""
    out = {"pods": 0, "bytes": 0}
    for kind in ("nodes", "pods"):
        for line in cache.requests.lines(kind, None, lambda: None):
            if line.startswith(b'{"type":"BOOKMARK"'):  # only these are decoded
                if initial_events_end(EVENT.decode(line).object) is not None:
                    break
            elif kind == "pods":
                out["pods"] += 1
                out["bytes"] += len(line)
    return out


def synced(cache: ClusterCache) -> None:
    """Nodes, then pods, each by the cache's own loop (``ClusterCache._run``) in its own thread,
    as the app runs it, until that kind is synced; then every watch is stopped."""
    for kind in ("nodes", "pods"):
        workers.start(f"watch-{kind}", lambda kind=kind: cache._run(kind))
        while not cache.status[kind].synced:
            time.sleep(0.005)
    cache.stop()


def decoders(cache: ClusterCache) -> Callable[[str, bytes], Any]:
    """Each kind's page decoder, the one the cache's list uses (its readers for this version)."""
    readers = cache._readers(relist=True)
    return lambda kind, data: readers[kind]._page.decode(data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kubeconfig")
    ap.add_argument("mode", choices=("wire", "decode", "stream-wire", "floor", "sync", "trace"))
    ap.add_argument("--pages", action="store_true", help="sync in pages even where lists stream")
    ap.add_argument("--page-size", type=int, default=500)
    ap.add_argument("--all-pods", action="store_true", help="list terminated pods too (no field selector)")
    args = ap.parse_args()
    api = api_client(load_configuration(ClusterConfig("false", args.kubeconfig)))
    cache = ClusterCache(
        api, page_size=args.page_size, live_pods_only=not args.all_pods, streaming=not args.pages
    )
    out: dict[str, Any] = {}
    gc.collect()
    if args.mode in ("wire", "decode"):
        decode = (lambda _, data: _LIST_META.decode(data)) if args.mode == "wire" else decoders(cache)
        t = time.perf_counter()
        out.update(again_if_gone(lambda: paged(cache, decode), out))
        out["seconds"] = time.perf_counter() - t
    elif args.mode == "stream-wire":
        t = time.perf_counter()
        out.update(streamed(cache))
        out["seconds"] = time.perf_counter() - t
    elif args.mode == "floor":
        t = time.perf_counter()
        out.update(again_if_gone(lambda: floor(cache), out))
        out["seconds"] = time.perf_counter() - t
    elif args.mode == "sync":
        before = rss()
        reset_peak()
        t = time.perf_counter()
        synced(cache)
        out["seconds"] = time.perf_counter() - t
        out["peak"] = peak() - before
        gc.collect()
        out["after"] = rss() - before
        size = cache.store.objects.size()
        out.update(pods=size.pods, nodes=size.nodes, estimated=size.estimated_bytes)
    else:
        cache.lists.freeze_gc = False
        tracemalloc.start()
        synced(cache)
        gc.collect()
        out["retained"], out["traced_peak"] = tracemalloc.get_traced_memory()
        out["pods"] = cache.store.objects.pod_count()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
