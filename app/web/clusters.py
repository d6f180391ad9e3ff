"""Which cluster a request is about: ``/c/<name>/…`` serves cluster ``<name>``'s pages (the
local cluster's stay at ``/``, so a single-cluster install looks as it always did). The prefix
moves to SCRIPT_NAME, so every link ``url_for`` makes on such a page stays within the cluster;
``environ["extres.cluster"]`` names it and ``environ["extres.root"]`` keeps the root, for links
to the other clusters. A name that is not a member is left alone: no route answers it (404)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from flask import request

from app.web import process

PREFIX = "/c/"


class ClusterPrefix:
    def __init__(self, app: Callable[..., Iterable[bytes]], names: Callable[[], Collection[str]]) -> None:
        self.app, self.names = app, names

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        root = environ.get("SCRIPT_NAME", "")
        environ["extres.root"] = root
        path = environ.get("PATH_INFO", "")
        if path.startswith(PREFIX):
            name, slash, rest = path[len(PREFIX) :].partition("/")
            if name in self.names():
                environ["SCRIPT_NAME"] = f"{root}{PREFIX}{name}"
                environ["PATH_INFO"] = slash + rest or "/"
                environ["extres.cluster"] = name
        return self.app(environ, start_response)


def asked() -> str | None:
    """The member cluster this request is about (None: the local one)."""
    name: str | None = request.environ.get("extres.cluster")
    return name


def home(name: str | None) -> str:
    """The overview of cluster ``name`` (None or the local one's name: the local one), from any
    cluster's page."""
    root = request.environ.get("extres.root", "")
    local = process.of().local.name
    return f"{root}{PREFIX}{name}/" if name and name != local else f"{root}/"


def same_page(name: str) -> str:
    """This page, on cluster ``name`` (the header's switcher: one click to any cluster's same page)."""
    query = request.query_string.decode("latin-1")
    return home(name).removesuffix("/") + request.path + (f"?{query}" if query else "")
