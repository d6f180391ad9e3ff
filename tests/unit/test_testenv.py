"""The control-plane script's version handling (no build, no control plane)."""

from __future__ import annotations

import os
import subprocess

from extres_demo.testenv import SCRIPT


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=30
    )


def test_an_unknown_version_is_refused_with_the_known_ones(tmp_path):
    for how in ({"EXTRES_KUBE_VERSION": "1.99.0"}, {}):
        args = ("--kube-version=1.99.0",) if not how else ()
        for command in ("build", "start"):
            done = run(
                *args, command, str(tmp_path / "plane"), EXTRES_CACHE_DIR=str(tmp_path / "cache"), **how
            )
            assert done.returncode == 2
            assert "unknown Kubernetes version '1.99.0'" in done.stderr
            assert "1.37.2 1.35.4" in done.stderr
    assert not (tmp_path / "plane").exists() and not (tmp_path / "cache").exists()  # nothing begun


def test_the_newest_version_is_the_default_and_is_cached_by_version(tmp_path):
    assert run("versions").stdout.split()[:2] == ["1.37.2", "1.35.4"]
    cache = str(tmp_path / "cache")
    assert run("bindir", EXTRES_CACHE_DIR=cache).stdout.strip() == f"{cache}/kube-v1.37.2-r1"
    older = run("bindir", EXTRES_CACHE_DIR=cache, EXTRES_KUBE_VERSION="v1.35.4").stdout.strip()
    assert older == f"{cache}/kube-v1.35.4-r1"
