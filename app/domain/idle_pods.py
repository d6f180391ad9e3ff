"""Idle GPUs (pure): the running pods whose devices' mean utilization over the usage window stayed
under the idle threshold, with the device-hours they held idle (app.domain.gpu_usage's reading
and the cache's pods are given)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from app.domain.gpu_usage import PodKey, Reading


@dataclass(frozen=True)
class Holding:
    """A running pod the cache knows, as the Idle page names it."""

    namespace: str
    pod: str
    node: str
    started: datetime
    owner: str = ""  # its owner workload, "Kind/name", when it has one


@dataclass(frozen=True)
class Idle:
    """A pod whose devices stayed under the threshold over the window."""

    holding: Holding
    devices: float  # the devices the exporter reports it holding (a shared device: its part)
    utilization: float  # the mean over its devices and the window, percent
    since: datetime  # the later of its start and the window's start
    device_hours: float  # devices x hours held idle within the window


def idle(
    reading: Reading, holding: Callable[[PodKey], Holding | None], threshold: float, now: datetime
) -> list[Idle]:
    """The pods whose devices' mean utilization over the window stayed under ``threshold``
    percent, most device-hours held idle first. A pod the cache does not know running (gone,
    finished) is left out; so is one without series (not idle for want of data)."""
    start = now - reading.window
    out = []
    for key, (total, devices) in reading.pod_use.items():
        mean = total / devices
        if mean >= threshold:
            continue
        h = holding(key)
        if h is None:
            continue
        since = min(now, max(h.started, start))
        hours = devices * (now - since).total_seconds() / 3600
        out.append(Idle(h, devices, mean, since, hours))
    out.sort(key=lambda i: (-i.device_hours, i.holding.namespace, i.holding.pod))
    return out
