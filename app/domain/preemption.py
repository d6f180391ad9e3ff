"""What preemption could do for a pending pod on one node (the scheduler's DefaultPreemption,
for the one resource it is short of): pure arithmetic over the holders' priorities."""

from __future__ import annotations

from collections.abc import Iterable


def unresolvable(wanted: int, allocatable: int) -> bool:
    """The request is above the node's allocatable: the scheduler (1.34+) marks the node
    UnschedulableAndUnresolvable there and does not try preemption on it."""
    return wanted > allocatable


def preemptible(holders: Iterable[tuple[int, int]], priority: int) -> int:
    """What the holders (priority, amount held) of lower priority than ``priority`` hold: what
    evicting them could free."""
    return sum(amount for p, amount in holders if p < priority)


def preemption_helps(wanted: int, allocatable: int, free: int, lower: int) -> bool:
    """Evicting every lower-priority holder (``lower``: what they hold) would leave enough free."""
    return not unresolvable(wanted, allocatable) and lower > 0 and free + lower >= wanted
