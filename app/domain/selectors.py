"""Label selectors (the kubectl syntax), parsed and matched without the API server.

Supported: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``, ``k in (a,b)``,
``k notin (a,b)``, joined by commas.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.domain.names import is_label_value, qualified_name_errors

_SET = re.compile(r"^\s*(?P<key>[^\s!=,()]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*")
_EQ = re.compile(r"^\s*(?P<key>[^\s!=,()]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s,()=!]*)\s*")
_EXISTS = re.compile(r"^\s*(?P<neg>!?)\s*(?P<key>[^\s!=,()]+)\s*")


class SelectorError(ValueError):
    pass


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "in", "notin", "exists", "!exists"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!exists":
            return self.key not in labels
        if self.op == "in":
            return labels.get(self.key) in self.values
        return labels.get(self.key) not in self.values


@dataclass(frozen=True)
class Selector:
    requirements: tuple[Requirement, ...] = ()
    text: str = ""

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def _check_key(key: str) -> str:
    errors = qualified_name_errors(key)
    if errors:
        raise SelectorError(f"label key {key!r}: {errors[0]}")
    return key


def _check_value(value: str) -> str:
    if not is_label_value(value):
        raise SelectorError(f"label value {value!r} is not valid")
    return value


def parse_selector(text: str) -> Selector:
    """Parse a label selector; raises SelectorError with a readable reason."""
    rest = text.strip()
    requirements: list[Requirement] = []
    while rest:
        if m := _SET.match(rest):
            values = frozenset(_check_value(v.strip()) for v in m["values"].split(","))
            requirements.append(Requirement(_check_key(m["key"]), m["op"], values))
        elif m := _EQ.match(rest):
            op = "notin" if m["op"] == "!=" else "in"
            value = _check_value(m["value"])
            requirements.append(Requirement(_check_key(m["key"]), op, frozenset({value})))
        elif m := _EXISTS.match(rest):
            op = "!exists" if m["neg"] else "exists"
            requirements.append(Requirement(_check_key(m["key"]), op))
        else:
            raise SelectorError(f"cannot parse {rest!r}")
        rest = rest[m.end() :]
        if rest.startswith(","):
            rest = rest[1:]
            if not rest.strip():
                raise SelectorError("selector ends with a comma")
        elif rest:
            raise SelectorError(f"expected ',' before {rest!r}")
    return Selector(tuple(requirements), text.strip())
