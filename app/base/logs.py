"""Logging: every logger of the process writes one JSON line per record to stderr.

The configuration is a ``logging.config.dictConfig`` dict, given to gunicorn as its
``logconfig_dict`` (``app.serving.gunicorn_options``), so it is in force wherever gunicorn loads
the app: the container's command line and ``extres serve`` alike. The formatter is
python-json-logger's; an audit record's fields (``app.base.audit``) stand at the top level of its line.

Access logs (a line per request, each 5-second poll of every open tab included) are off unless
``EXTRES_ACCESS_LOG`` is set.
"""

from __future__ import annotations

import logging
import logging.config
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pythonjsonlogger.json import JsonFormatter

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
RENAMED = {"asctime": "time", "levelname": "level", "name": "logger"}


class Formatter(JsonFormatter):
    """python-json-logger's formatter, times in UTC ISO 8601 with milliseconds, an audit record's
    fields lifted to the top level."""

    converter = staticmethod(time.gmtime)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("rename_fields", RENAMED)
        kwargs.setdefault("datefmt", "%Y-%m-%dT%H:%M:%S")
        super().__init__(*args, **kwargs)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return f"{super().formatTime(record, datefmt)}.{int(record.msecs):03d}Z"

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        super().add_fields(log_data, record, message_dict)
        audit = log_data.pop("audit", None)
        if isinstance(audit, dict):
            log_data.update(audit)


# the cluster what is being done is about: set for a request (its path's cluster) and around a
# cluster's start, whose threads inherit it (app.base.workers); every line logged then names it
CLUSTER: ContextVar[str] = ContextVar("extres_cluster", default="")


@contextmanager
def about(cluster: str) -> Iterator[None]:
    """Log lines (and the threads started) within are about ``cluster``."""
    token = CLUSTER.set(cluster)
    try:
        yield
    finally:
        CLUSTER.reset(token)


class ClusterField(logging.Filter):
    """A line logged about a cluster names it (``cluster``), unless it names one itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        if (name := CLUSTER.get()) and not hasattr(record, "cluster"):
            record.cluster = name
        return True


def config(level: str = "INFO", access_log: bool = False) -> dict[str, Any]:
    """The dictConfig for the process (gunicorn's own loggers included)."""
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "json",
        "stream": "ext://sys.stderr",
        "filters": ["cluster"],
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": Formatter, "fmt": FORMAT}},
        "filters": {"cluster": {"()": ClusterField}},
        "handlers": {"stderr": handler},
        "root": {"level": level.upper(), "handlers": ["stderr"]},
        "loggers": {
            # gunicorn's own: through the root's handler, as every other
            "gunicorn.error": {"level": level.upper(), "handlers": [], "propagate": True},
            "gunicorn.access": {
                "level": "INFO" if access_log else "WARNING",
                "handlers": [],
                "propagate": True,
            },
            "extres.audit": {"level": "INFO", "handlers": [], "propagate": True},
            # its connection retries and full pools, a line each: a cluster's lost contact is
            # logged once by its cache (app.kube.api.contact)
            "urllib3.connectionpool": {"level": "ERROR", "handlers": [], "propagate": True},
        },
    }


def configure(level: str = "INFO", access_log: bool = False) -> None:
    """Configure this process's logging (the commands that run before gunicorn does)."""
    logging.config.dictConfig(config(level, access_log))
