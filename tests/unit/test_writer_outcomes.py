"""What a change reports when the node moved since its form or preview was read
(app/kube/api/writer.py): moved elsewhere, a conflict that names both values; moved to what was
asked (the same change applied since, by this user in another tab or by anyone), no conflict and
no blame, and nothing sent."""

from __future__ import annotations

from typing import Any

import pytest

from app.domain.changes import DESIRED_ANNOTATION
from app.kube.api.writer import NodeWriter

D = "example.com/dongle"


def writer(
    capacity: dict[str, str], desired: str | None = None, managed: list[Any] | None = None
) -> tuple[NodeWriter, list[Any]]:
    annotations = {DESIRED_ANNOTATION: desired} if desired else {}
    node = {"metadata": {"name": "n1", "resourceVersion": "7", "annotations": annotations,
                         "managedFields": managed or []},
            "status": {"capacity": capacity}}  # fmt: skip
    w = NodeWriter(None)  # type: ignore[arg-type]
    sent: list[Any] = []
    w.get = lambda name: node  # type: ignore[method-assign]
    w.patch = lambda name, ops, dry_run=False: sent.append(ops) or node  # type: ignore[method-assign]
    return w, sent


@pytest.mark.parametrize(
    ("action", "capacity", "desired", "new"),
    [
        ("set", {D: "6"}, f'{{"{D}": 6}}', 6),  # set to 6 since the preview that saw 4
        ("remove", {}, None, None),  # removed since
    ],
)
def test_a_change_already_made_since_it_was_read_is_no_conflict(action, capacity, desired, new):
    w, sent = writer(capacity, desired)
    outcome = w._run("n1", D, action, new, 4, "ann", False)
    assert outcome.ok and "changed to that since you loaded it" in outcome.message
    assert sent == []


def test_a_value_moved_elsewhere_since_it_was_read_is_a_conflict_naming_both():
    w, sent = writer({D: "5"})
    outcome = w._run("n1", D, "set", 6, 4, "ann", False)
    assert not outcome.ok and outcome.status == 409
    assert "you saw 4, it is now 5" in outcome.message and sent == []


def test_a_conflict_names_who_moved_the_value_and_when_as_the_node_says():
    from datetime import UTC, datetime

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = {"manager": "kubectl-patch", "operation": "Update", "subresource": "status", "time": now,
             "fieldsV1": {"f:status": {"f:capacity": {f"f:{D}": {}}}}}  # fmt: skip
    w, sent = writer({D: "5"}, managed=[entry])
    outcome = w._run("n1", D, "set", 6, 4, "ann", False)
    said = (
        f"changed since you loaded it (by kubectl-patch, {now[:10]} {now[11:19]} UTC): you saw 4, it is now 5"
    )
    assert not outcome.ok and said in outcome.message and sent == []
