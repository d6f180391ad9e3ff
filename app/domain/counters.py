"""Partitionable devices (KEP-4815, DRAPartitionableDevices: beta and on from 1.36): how many more
devices of a set of candidates can be allocated at once, given the shared counters they consume.

A pool's slices define counter sets (``sharedCounters``: a set's name and, per counter, an
amount); a device names the sets and the amounts it consumes (``consumesCounters``). A device
may be allocated only while every counter it consumes has that much left after the devices
already allocated (whatever class they were allocated through). The scheduler's allocator
searches for devices until a request is met, so a pod asking for ``k`` devices fits where some
``k`` candidates fit the counters left together; the most that fit together is the number that
decides it (any subset of a set that fits also fits). Hand-written because it is a small exact
search: candidates are split into groups that share no counter set (a GPU's partitions, in
practice), and each group is searched, largest first pruned by what is left, within a budget of
steps; past it the answer is unknown, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

Counter = tuple[str, str]  # (counter set, counter)
Consumes = Mapping[Counter, Decimal]

STEPS = 200_000  # search steps over all groups of one node and class


class TooMany(Exception):
    """The search needed more steps than its budget."""


def most_at_once(candidates: Sequence[Consumes], left: Mapping[Counter, Decimal], steps: int = STEPS) -> int:
    """How many of ``candidates`` (each what it consumes) fit the counters ``left`` together; a
    candidate consuming a counter not in ``left`` never fits. Raises TooMany past ``steps``."""
    fitting = [c for c in candidates if all(k in left and v <= left[k] for k, v in c.items())]
    budget = [steps]
    total = 0
    for group in _groups(fitting):
        total += _search(sorted(group, key=lambda c: sum(c.values())), dict(left), budget)
    return total


def _groups(candidates: list[Consumes]) -> list[list[Consumes]]:
    """Candidates in groups that share no counter set (each searched alone); a candidate that
    consumes nothing is a group of its own."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for c in candidates:
        sets = sorted({s for s, _ in c})
        for s in sets[1:]:
            parent[root(s)] = root(sets[0])
    groups: dict[str, list[Consumes]] = {}
    alone: list[list[Consumes]] = []
    for c in candidates:
        if not c:
            alone.append([c])
        else:
            groups.setdefault(root(next(iter(c))[0]), []).append(c)
    return [*groups.values(), *alone]


def _search(group: list[Consumes], left: dict[Counter, Decimal], budget: list[int]) -> int:
    best = 0

    def go(i: int, taken: int) -> None:
        nonlocal best
        budget[0] -= 1
        if budget[0] < 0:
            raise TooMany
        best = max(best, taken)
        if i == len(group) or taken + len(group) - i <= best:
            return
        c = group[i]
        if all(v <= left[k] for k, v in c.items()):
            for k, v in c.items():
                left[k] -= v
            go(i + 1, taken + 1)
            for k, v in c.items():
                left[k] += v
        go(i + 1, taken)

    go(0, 0)
    return best
