"""glibc's allocator, tuned for a process that reads list pages of several MiB.

By default glibc raises its mmap threshold to the size of the largest block freed (up to
32 MiB), so after the first list page (~6 MiB of JSON at 500 pods) every page is carved from
the heap, and each thread that allocates one gets an arena of its own: freed pages stay in the
process. A fixed threshold keeps every block past it mmapped (handed back to the kernel when
freed), and two arenas bound the threads' share. ``bench/first_answer.py`` measures the effect.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters (malloc.h)
M_ARENA_MAX = -8
MMAP_THRESHOLD = 256 * 1024
ARENA_MAX = 2


def tune() -> bool:
    """Apply the two settings; False where the C library is not glibc (nothing is changed)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_ARENA_MAX, ARENA_MAX))
    if not ok:
        log.info("malloc settings not applied")
    return ok
