"""Fixtures the integration tests share."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.helpers import eventually
from tests.kube_helpers import create_node, ready


@pytest.fixture
def node(core: client.CoreV1Api, uid: str, web: Any) -> str:
    """A node with 4 example.com/dongle, labelled group=<uid>, Ready (kwok) and already in the
    app's cache: nothing but the test changes it from here on (until kwok's heartbeat, minutes
    away)."""
    name = f"{uid}-n"
    create_node(core, name, {"example.com/dongle": "4"}, labels={"group": uid})
    ready(core, name)
    eventually(lambda: web.get(f"/nodes/{name}").status_code == 200)
    return name
