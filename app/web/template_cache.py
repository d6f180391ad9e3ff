"""Compiled templates kept on disk between starts: Jinja's bytecode cache.

Compiling the 47 templates (parse, generate Python, compile it) takes ~0.3 s of CPU; loading
them from this cache ~0.01 s. Compiled after the first sync, that CPU was taken from the first
page served after it (docs/performance.md "The floor, the pages in flight, and the templates").
Each entry is checked against its template's source and Jinja's and Python's versions, so an
edited template is compiled again, never served stale. The image fills its cache when it is
built (``app.fill_template_cache``) and reads it read-only: a directory that cannot be written
is read and never written. One that another user owns or could write is not used at all, and
neither is an entry that is a link or that another user owns or could write (their bytes are
code this process would run).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

from jinja2 import BytecodeCache, FileSystemBytecodeCache
from jinja2.bccache import Bucket

log = logging.getLogger(__name__)


class KeptTemplates(FileSystemBytecodeCache):
    def load_bytecode(self, bucket: Bucket) -> None:
        """An entry is loaded only if it is a regular file (not a link) that this user or root
        owns and no one else may write: its bytes are code this process would run."""
        path = os.path.join(self.directory, self.pattern % bucket.key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # none yet, or a symlink (ELOOP)
            return
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not _safe(st) or not stat.S_ISREG(st.st_mode):
                log.warning("template cache entry %s is not this user's own file: not used", path)
                return
            bucket.load_bytecode(f)

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):  # a read-only image, a full disk: compiled in memory this time
            super().dump_bytecode(bucket)


def default_directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "extres" / "templates"


def template_cache(setting: str) -> BytecodeCache | None:
    """The cache the setting names ("" the user's cache directory, "off" none), or None when it
    cannot be made or is not safe to read."""
    if setting == "off":
        return None
    directory = Path(setting) if setting else default_directory()
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = directory.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory to find
        return None
    if not _safe(st):
        log.warning("template cache %s is owned or writable by another user: not used", directory)
        return None
    return KeptTemplates(str(directory))


def _safe(st: os.stat_result) -> bool:
    """Owned by this user or root, and writable by no one else."""
    return st.st_uid in (os.getuid(), 0) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
