"""The bounded load test (bench/load.py) at 5,000 nodes: 100 viewers polling fragments every 5 s
and an editor making changes, against gunicorn and a real kube-apiserver of its own. No errors,
no change lost or applied twice. How fast it answers is the bench's to print (python -m
bench.load), never a timed assertion here: this machine's load is not the app's speed."""

from __future__ import annotations

import pytest
from kubernetes import client

from app.kube.api.client import ClusterConfig, api_client, load_configuration
from bench.load import FRAGMENTS, get, run, seed
from extres_demo import testenv
from tests.serving import Server

pytestmark = pytest.mark.kube


def test_one_hundred_viewers_and_an_editor_at_5000_nodes(tmp_path):
    plane = testenv.start(tmp_path / "kube", bare=True)
    api = api_client(load_configuration(ClusterConfig("false", str(plane.kubeconfig))))
    api.configuration.connection_pool_maxsize = 32
    try:
        core = client.CoreV1Api(api)
        seed(core, 5000)
        server = Server(plane)
        try:
            for path, headers in FRAGMENTS:
                assert get(server.url + path, headers)[0] == 200
            result = run(server, core, nodes=5000, viewers=100, seconds=30, changes=10)
        finally:
            server.stop()
        print("\n".join(result.report()))
        assert result.errors == []
        assert result.requests >= 500  # 100 viewers x 30 s / 5 s, give or take the start
        assert len(result.sent) == 10 and result.lost == [] and result.twice == []
    finally:
        api.close()
        plane.stop()
