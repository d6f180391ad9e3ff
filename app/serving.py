"""gunicorn settings, shared by ``extres serve`` and the container's gunicorn config.

One worker process with threads: the watch-fed cache lives in that one process
and every request reads it. Several worker processes would each keep a copy of
the cache and each hold its own watches on the API server (N times the memory
and the API load) for no gain: the work per request is small and I/O-bound.
"""

from __future__ import annotations

from typing import Any

from app.config import Settings


def gunicorn_options(settings: Settings, threads: int = 8) -> dict[str, Any]:
    return {
        "bind": f"{settings.host}:{settings.port}",
        "workers": 1,
        "worker_class": "gthread",
        "threads": threads,
        "accesslog": "-",
        "errorlog": "-",
        "loglevel": settings.log_level.lower(),
        "worker_tmp_dir": "/tmp",  # the root filesystem is read-only in the container
        "limit_request_line": 8190,
        "graceful_timeout": 10,
    }
