"""Werkzeug's URL builders compiled once per shape for the whole test session.

Every app compiles two builder functions per URL rule (``Rule._compile_builder``: an AST made,
compiled and exec'd), 88 % of ``create_app``'s 12.6 ms; the served process makes one app, the
test lanes several hundred (one per test). A builder is a pure function of its rule's trace, its
defaults and its converters' kinds (it reaches the converters through the rule it is bound to),
so one compiled per shape serves every app's rule of that shape. A test lane's speed-up only: the
app is not changed, and url_for still runs werkzeug's own builder code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing import rules

_ORIGINAL = rules.Rule._compile_builder
_KEPT: dict[tuple[Any, ...], Callable[..., tuple[str, str]]] = {}


def _shape(rule: rules.Rule, append_unknown: bool) -> tuple[Any, ...]:
    converters = tuple(
        (name, type(c).__qualname__, repr(sorted((k, v) for k, v in vars(c).items() if k != "map")))
        for name, c in sorted(rule._converters.items())
    )
    return (tuple(rule._trace), repr(sorted((rule.defaults or {}).items())), converters, append_unknown)


def _compile_builder(self: rules.Rule, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
    key = _shape(self, append_unknown)
    if (built := _KEPT.get(key)) is None:
        built = _KEPT[key] = _ORIGINAL(self, append_unknown)
    return built


def install() -> None:
    """Compile each builder shape once from now on (idempotent)."""
    rules.Rule._compile_builder = _compile_builder  # type: ignore[method-assign]
