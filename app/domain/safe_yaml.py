"""YAML from strangers (the planner's pasted manifests): checked event by event before anything
is built.

``yaml.safe_load`` refuses Python tags but still expands anchors and aliases: ten aliases of ten
aliases, seven levels deep, is a kilobyte of text and ten million nodes once built, and deep
nesting recurses until Python gives up. So the parser's event stream is read first (the C parser
where PyYAML has it, the same events either way), refusing any anchor or alias and capping the
events, the nesting, the entries of one collection and the length of one scalar; only a stream
that passed is loaded. A manifest needs none of what is refused (Kubernetes' own YAML reader
refuses alias expansion past a small budget for the same reason, CVE-2019-11253).
"""

from __future__ import annotations

from typing import Any

import yaml

LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_EVENTS = 20_000  # a real Deployment manifest is a few hundred
MAX_DEPTH = 40  # a pod spec nests about 12 deep
MAX_ENTRIES = 1_000  # items of one list, or keys of one mapping
MAX_SCALAR = 8_192  # characters of one value
MAX_NUMBER = 40  # characters of one number: int64 has 19 digits


class UnsafeYAML(ValueError):
    """The text is refused before it is loaded; the message says why, with the line."""


def load_all(text: str, max_scalar: int = MAX_SCALAR) -> list[Any]:
    """The documents of ``text`` (empty ones left out), once its events passed every check
    (``max_scalar``: a value's longest, e.g. a kubeconfig's CA bundle, base64)."""
    check(text, max_scalar)
    return [doc for doc in yaml.load_all(text, Loader=LOADER) if doc is not None]


def check(text: str, max_scalar: int = MAX_SCALAR) -> None:
    """Raise UnsafeYAML at the first event past a limit; yaml.YAMLError if it does not parse."""
    open_: list[list[int]] = []  # per open collection: [events inside it so far, their limit]
    for count, event in enumerate(yaml.parse(text, Loader=LOADER), 1):
        where = _line(event)
        if count > MAX_EVENTS:
            raise UnsafeYAML(f"The manifest is too large: more than {MAX_EVENTS} YAML nodes{where}.")
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise UnsafeYAML(f"Anchors and aliases (& and *) are not accepted{where}.")
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)) and open_:
            open_[-1][0] += 1
            if open_[-1][0] > open_[-1][1]:
                raise UnsafeYAML(f"A list or mapping has more than {MAX_ENTRIES} entries{where}.")
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > max_scalar:
            raise UnsafeYAML(f"A value is longer than {max_scalar} characters{where}.")
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_NUMBER and _a_number(event):
            raise UnsafeYAML(f"A number is longer than {MAX_NUMBER} characters{where}.")
        if isinstance(event, yaml.CollectionStartEvent):
            if len(open_) >= MAX_DEPTH:
                raise UnsafeYAML(f"The manifest nests deeper than {MAX_DEPTH} levels{where}.")
            # a mapping's entries arrive as a key and a value each
            open_.append([0, MAX_ENTRIES * (2 if isinstance(event, yaml.MappingStartEvent) else 1)])
        elif isinstance(event, yaml.CollectionEndEvent):
            open_.pop()


_RESOLVER = yaml.resolver.Resolver()
_NUMBERS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}


def _a_number(event: Any) -> bool:
    """Whether the loader would build a number of this scalar (plain, or tagged !!int/!!float):
    PyYAML's int() of thousands of digits raises past Python's limit."""
    tag = (
        event.tag
        if event.tag not in (None, "!")
        else _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
    )
    return tag in _NUMBERS


def _line(event: Any) -> str:
    mark = getattr(event, "start_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""
