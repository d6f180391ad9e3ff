"""The durable history of extended resource capacity: one record per change of a node's
capacity or allocatable of an extended resource, whoever made it.

* What changed: a node's extended capacity or allocatable between two views of it.
* Who: the field manager that owns the field in the node's ``managedFields`` (the kubelet,
  ``kubectl-patch``, a device plugin's kubelet, this dashboard as ``extres``), and this
  dashboard's own signed-in user where it made the change.
* When: the owning manager's time in ``managedFields`` (the API server sets it), else when
  the change was seen.
* Identity: a record's key is a digest of (node, field, resource, the node's
  resourceVersion after the change): every replica that sees one change makes the same key, so
  two replicas merging into one store write it once, and a replica's own write (with the user)
  and its watch's sighting (without) become one record.
* Where: a member cluster's records (app.runtime.fleet) are kept in this dashboard's own cluster's
  store beside its own, each naming its cluster (``cluster``; "" for the dashboard's own
  cluster, whose records read and seal as they always did): each cluster's history shows its
  own records alone, and one change of one cluster still has one key.
* Records are kept per UTC day, at most ``PER_DAY`` a day (past it a new record is refused
  and counted, never written over another), and sealed with the history's own key (not the
  session key, which rotates): a record written by anyone else who may edit the store is left
  out of what is shown, and left untouched in the store.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import date, datetime, timedelta

from app.domain.numbers import bounded_int

FIELDS = ("capacity", "allocatable")
PER_DAY = 2000  # records a day (~300 bytes each)
DAY_BYTES = 900_000  # and their encodings' size: within a ConfigMap's 1 MiB, checked before a write
SLOTS = 32  # day stores, reused in turn: any 32 consecutive days have stores of their own
MAX_DAYS = SLOTS - 1  # days kept at most
DAY_KEY = "day"  # the day a store holds, beside its records (record keys are 24 hex digits)


def slot(day: str) -> int:
    """The store of ``day`` (YYYY-MM-DD): its ordinal modulo SLOTS, so a store is reused only
    after SLOTS days, when what it held is past every retention allowed."""
    return date.fromisoformat(day).toordinal() % SLOTS


# characters of a record's encoding read at most: the longest names the API allows (node 253,
# resource 317, field manager 128, user 256 here), escaped as JSON, fit
MAX_VALUE = 8192


@dataclass(frozen=True, slots=True)
class Record:
    when: str  # RFC 3339, UTC
    node: str
    field: str  # "capacity" or "allocatable"
    resource: str
    before: int | None  # None: absent
    after: int | None
    manager: str = ""  # the field manager that owns the field now ("" when not known)
    user: str = ""  # this dashboard's signed-in user, where it made the change
    version: str = ""  # the node's resourceVersion after the change
    cluster: str = ""  # the member cluster it happened on ("": this dashboard's own)

    @property
    def key(self) -> str:
        text = f"{self.node}|{self.field}|{self.resource}|{self.version}"
        text = f"{self.cluster}|{text}" if self.cluster else text
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    @property
    def day(self) -> str:
        return self.when[:10]

    def device_move(self, device_plugin: bool) -> str:
        """What a device plugin's move means in devices: "1 GPU lost", "2 GPUs back" ("" for any
        other record: an admin's change is a change, not a loss)."""
        if not device_plugin or self.before is None or self.after is None or self.before == self.after:
            return ""
        word = "GPU" if "gpu" in self.resource else "device"
        n = abs(self.after - self.before)
        return f"{n} {word}{'s' if n != 1 else ''} {'lost' if self.after < self.before else 'back'}"


def moved(
    before: Mapping[str, Mapping[str, int]], after: Mapping[str, Mapping[str, int]]
) -> list[tuple[str, str, int | None, int | None]]:
    """(field, resource, before, after) for each extended amount that differs; the mappings hold
    ``capacity`` and ``allocatable``, each of extended resources only."""
    out = []
    for f in FIELDS:
        old, new = before.get(f, {}), after.get(f, {})
        for resource in sorted(set(old) | set(new)):
            if old.get(resource) != new.get(resource):
                out.append((f, resource, old.get(resource), new.get(resource)))
    return out


@dataclass(frozen=True, slots=True)
class Managed:
    """One ``managedFields`` entry: who, when, and the extended resources it owns per field."""

    manager: str
    time: str
    owns: Mapping[str, frozenset[str]]  # field -> resource names


def owner(entries: Sequence[Managed], field: str, resource: str) -> tuple[str, str]:
    """(manager, time) of the entry that owns ``status.<field>.<resource>``, the newest if
    several do; ("", "") when none does (the field was removed: then the newest entry that
    touched the field at all, which is who removed it)."""
    owning = [e for e in entries if resource in e.owns.get(field, ())]
    if not owning:
        owning = [e for e in entries if field in e.owns]
    if not owning:
        return "", ""
    best = max(owning, key=lambda e: e.time)
    return best.manager, best.time


def merged(a: Record, b: Record) -> Record:
    """Two sightings of one change (same key): the user, manager and earliest time each knows."""
    return replace(
        a,
        user=a.user or b.user,
        manager=a.manager or b.manager,
        when=min(a.when, b.when) if a.when and b.when else a.when or b.when,
    )


def _body(record: Record) -> dict[str, object]:
    """The record's fields; ``cluster`` only when it names one (the own cluster's records are
    written, keyed and sealed exactly as before members existed)."""
    body = asdict(record)
    if not record.cluster:
        del body["cluster"]
    return body


def seal(key: str, record: Record) -> str:
    text = json.dumps(_body(record), sort_keys=True, separators=(",", ":"))
    return hmac.new(key.encode(), f"capacity-log|{text}".encode(), hashlib.sha256).hexdigest()[:32]


def encode(record: Record, key: str) -> str:
    body = _body(record)
    body["seal"] = seal(key, record)
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def decode(text: str, keys: Sequence[str]) -> Record | None:
    """The record, or None when it is not one this app sealed (or cannot be read)."""
    if len(text) > MAX_VALUE:
        return None
    try:
        body = json.loads(text)
        mac = body.pop("seal")
        record = Record(**body)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    if not isinstance(mac, str) or not all(
        isinstance(getattr(record, f), str) for f in ("when", "node", "cluster")
    ):
        return None
    sent = mac.encode("utf-8", "surrogatepass")  # compare_digest refuses non-ASCII str
    if not any(hmac.compare_digest(seal(k, record).encode(), sent) for k in keys):
        return None
    return record


def merged_day(
    held: Mapping[str, str], records: Iterable[Record], keys: Sequence[str], limit: int = PER_DAY
) -> tuple[dict[str, str], list[Record]]:
    """One day's store after adding ``records``: (its entries, the records refused).

    What is there stays: an entry that does not verify under ``keys`` (another key's, or not
    this app's) is kept untouched, never deleted; a record already there takes what the new
    sighting knows. A new record enters only while the day holds fewer than ``limit`` records
    and DAY_BYTES: the limits hold before a write, and what they refuse is returned (to be
    counted), never lost silently in place of something kept."""
    out = dict(held)
    size = sum(len(k) + len(v) for k, v in out.items())
    mine: dict[str, Record] = {}
    for k, text in held.items():
        r = decode(text, keys)
        if r is not None and k == r.key:
            mine[k] = r
    refused: list[Record] = []
    for r in records:
        old = mine.get(r.key)
        if old is None and r.key in out:
            refused.append(r)  # the key is held by an entry that does not verify: left as it is
            continue
        entry = encode(merged(old, r) if old is not None else r, keys[0])
        grown = len(entry) - len(out.get(r.key, "")) + (0 if r.key in out else len(r.key))
        if old is None and (len(out) >= limit or size + grown > DAY_BYTES):
            refused.append(r)
            continue
        mine[r.key] = merged(old, r) if old is not None else r
        out[r.key] = entry
        size += grown
    return out, refused


def merged_store(
    held: Mapping[str, str], day: str, records: Iterable[Record], keys: Sequence[str], limit: int = PER_DAY
) -> tuple[dict[str, str], list[Record]]:
    """The store of ``day`` after adding its ``records`` (``merged_day``). A store that holds
    an older day holds one SLOTS days old or more, past every retention: it starts again empty.
    One that holds a newer day is never emptied for an older record: the records are refused."""
    kept = held.get(DAY_KEY, "")
    if kept > day:
        return dict(held), list(records)
    entries = {k: v for k, v in held.items() if k != DAY_KEY} if kept == day else {}
    out, refused = merged_day(entries, records, keys, limit)
    return {DAY_KEY: day, **out}, refused


CLAIMED_SKEW = timedelta(minutes=10)


def when(claimed: str, seen: str) -> str:
    """A change's time: the one its writer's managedFields entry claims (RFC 3339, UTC), when it
    is within CLAIMED_SKEW of when the change was seen; else when it was seen. Anyone who may
    write a node may write that entry, and a date far off would file the record under another
    day."""
    try:
        gap = abs(datetime.fromisoformat(claimed) - datetime.fromisoformat(seen))
    except (TypeError, ValueError):
        return seen
    return claimed if gap <= CLAIMED_SKEW else seen


REMOVED_SKEW = timedelta(seconds=5)


def attributed(entries: Sequence[Managed], field: str, resource: str, seen: str) -> tuple[str, str]:
    """Who made a change seen at ``seen``, and when. An amount set: its owner, dated as it claims
    (``when``). An amount removed: nobody owns it any more, and the remover's entry goes with its
    last field, so the newest entry still touching the field (a kubelet's, written minutes
    before) is its remover only if it wrote within REMOVED_SKEW of the sighting; else nobody is
    named and the change is dated when it was seen (it was dated, and credited, as that other
    entry's last write)."""
    manager, claimed = owner(entries, field, resource)
    if any(resource in e.owns.get(field, ()) for e in entries):
        return manager, when(claimed, seen)
    try:
        near = abs(datetime.fromisoformat(claimed) - datetime.fromisoformat(seen)) <= REMOVED_SKEW
    except (TypeError, ValueError):
        near = False
    return (manager, claimed) if near else ("", seen)


def newest_first(records: Iterable[Record]) -> list[Record]:
    """Newest first: by time (to the second), then by the node's resourceVersion (two changes
    of one node in one second come in the order the API server made them)."""

    def key(r: Record) -> tuple[str, int, str, str, str]:
        version = bounded_int(r.version, 0) or 0
        return (r.when, version, r.node, r.field, r.resource)

    return sorted(records, key=key, reverse=True)


def including(stored: Iterable[Record], waiting: Iterable[Record]) -> list[Record]:
    """The stored records with those this process has yet to write (or is writing), each change
    once (a sighting of one already stored adds what it knows): a change made here is in the
    history the moment it is made, not a second later."""
    by_key = {r.key: r for r in stored}
    for r in waiting:
        by_key[r.key] = merged(by_key[r.key], r) if r.key in by_key else r
    return newest_first(by_key.values())
