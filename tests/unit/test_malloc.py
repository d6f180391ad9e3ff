"""glibc's allocator settings (app.serving.malloc): applied where the C library is glibc, as in the image
and on the test machines; elsewhere nothing is changed and the server still starts."""

from __future__ import annotations

import ctypes

import pytest

from app.serving import gunicorn_options, malloc


def test_the_settings_apply_on_glibc():
    assert malloc.tune() is True
    assert malloc.tune() is True  # again: the same settings, no harm


def test_without_glibc_nothing_is_changed(monkeypatch: pytest.MonkeyPatch):
    def missing(*args: object, **kwargs: object) -> None:
        raise OSError("no such library")

    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert malloc.tune() is False


def test_the_worker_tunes_them_before_it_allocates(monkeypatch: pytest.MonkeyPatch):
    calls: list[bool] = []
    monkeypatch.setattr(malloc, "tune", lambda: calls.append(True) or True)
    from app.settings.config import Settings

    gunicorn_options(Settings.from_env())["post_fork"](None, None)
    assert calls == [True]
