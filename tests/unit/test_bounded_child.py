"""Both children (the selector sandbox, the usage refresh) start through app/sandbox/bounded_child.py:
isolated, with no setting or key of the parent's, in a directory it cannot write."""

from __future__ import annotations

import json
import os
import resource
import subprocess

import pytest

from app.sandbox import bounded_child


def test_a_child_gets_no_setting_no_key_no_working_directory_and_its_limits(monkeypatch, tmp_path):
    monkeypatch.setenv("EXTRES_SECRET_KEY", "the parent's key, never the child's")
    monkeypatch.setenv("EXTRES_HISTORY_KEY", "another")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "json.py").write_text("raise SystemExit('imported from the working directory')\n")
    child = bounded_child.spawn(
        "tests.unit.child_reports", 1 << 30, passed_env=("HTTPS_PROXY",), stdout=subprocess.PIPE
    )
    out, _ = child.communicate(timeout=30)
    assert child.returncode == 0, out
    told = json.loads(out)
    assert set(told["env"]) <= {"PATH", "LANG", "HTTPS_PROXY", "LC_CTYPE"}
    assert told["env"]["HTTPS_PROXY"] == "http://proxy.example:3128"
    assert told["cwd"] == "/" and told["isolated"] == 1
    assert str(tmp_path) not in told["path"] and "" not in told["path"]
    assert os.path.realpath(told["path"][0]) == os.path.realpath(bounded_child.ROOT)


def test_the_limits_are_set_on_the_child(tmp_path):
    child = bounded_child.spawn("tests.unit.child_reports", 256 << 20, stdout=subprocess.PIPE)
    try:
        assert resource.prlimit(child.pid, resource.RLIMIT_AS)[0] == 256 << 20
        assert resource.prlimit(child.pid, resource.RLIMIT_CORE)[0] == 0
    finally:
        child.communicate(timeout=30)


def test_a_child_kind_starts_at_most_its_restarts_a_minute_and_each_end_is_counted():
    """Both children take the same bound: one that dies on arrival costs a few starts a minute,
    never a busy loop (the usage refresh had none)."""
    kind = bounded_child.Child("a test child", "tests.unit.child_exits", 256 << 20, restarts=2)
    before = bounded_child.EXITS.counts().get(("a test child", "failed"), 0)
    for _ in range(2):
        with pytest.raises(bounded_child.Ended) as ended:
            kind.run(b"", deadline=30)
        assert ended.value.reason == "failed" and ended.value.returncode == 1
    with pytest.raises(bounded_child.Ended, match="not started again within the minute"):
        kind.run(b"", deadline=30)
    assert kind.start() is None
    assert bounded_child.EXITS.counts()[("a test child", "failed")] == before + 2
    assert kind.last_exit == "failed"


def test_the_usage_refresh_past_its_restarts_says_so_and_asks_nothing():
    from datetime import timedelta

    from app.usage import refresh
    from app.usage.poller import UsageUnavailable

    kind = bounded_child.Child(refresh.CHILD, "tests.unit.child_exits", refresh.MEMORY_LIMIT, restarts=1)
    job = refresh.Job("http://127.0.0.1:9", None, None, 1.0, (), timedelta(hours=1), 10, {})
    with pytest.raises(UsageUnavailable, match=r"the refresh failed \(exit 1\)"):
        refresh.in_child(job, kind)
    with pytest.raises(UsageUnavailable, match="keeps failing"):
        refresh.in_child(job, kind)
