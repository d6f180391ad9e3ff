"""A loopback TCP proxy for fault and replica tests: forwards each connection to the next
upstream in turn (round robin), and can cut every open connection, refuse new ones, or delay
what comes back. TLS passes through untouched."""

from __future__ import annotations

import contextlib
import itertools
import socket
import threading
import time

from extres_demo import testenv


class TCPProxy:
    def __init__(self, *upstreams: int) -> None:
        self.port = testenv.free_port()
        self._next = itertools.cycle(upstreams)
        self.delay = 0.0  # seconds before each chunk from upstream is passed on
        self.refusing = False
        self.connections = 0  # accepted, over the proxy's life
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                down, _ = self._listener.accept()
            except OSError:
                return
            if self.refusing:
                down.close()
                continue
            self.connections += 1
            try:
                up = socket.create_connection(("127.0.0.1", next(self._next)), timeout=5)
            except OSError:
                down.close()
                continue
            up.settimeout(None)
            with self._lock:
                self._open.update((down, up))
            threading.Thread(target=self._pipe, args=(down, up, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(up, down, True), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, slow: bool) -> None:
        try:
            while chunk := src.recv(65536):
                if slow and self.delay:
                    time.sleep(self.delay)
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                self._close(s)

    def _close(self, s: socket.socket) -> None:
        with self._lock:
            self._open.discard(s)
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)
        s.close()

    def cut(self) -> None:
        """Drop every open connection (both ends see it closed)."""
        with self._lock:
            victims = list(self._open)
        for s in victims:
            self._close(s)

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()
