"""What the log says of one cluster's contact (app/kube/api/contact.py, app/base/logs.py): one line when
it is lost, one when it is back, whatever the kinds and retries between; a refusal once per kind;
every line logged about a cluster names it, in its background threads too."""

from __future__ import annotations

import io
import json
import logging

from app.base import logs, workers
from app.kube.api.contact import Contact

KINDS = ("nodes", "pods", "resourceslices", "deviceclasses", "resourceclaims", "resourcequotas")


def test_an_outage_of_every_watch_with_retries_is_two_lines(caplog):
    contact = Contact()
    with caplog.at_level(logging.DEBUG, logger="app.kube.api.cache"):
        for _ in range(10):  # ten retries of each kind, backing off
            for kind in KINDS:
                contact.failed(kind, "Could not talk to the API server (the connection failed).", "refused")
        for kind in KINDS:
            contact.ok(kind)
        contact.ok("pods")  # once back, more successes say nothing
    said = [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records if r.levelno >= logging.INFO]
    assert said == [
        ("WARNING", "lost contact with the API server (watch of nodes)"),
        ("INFO", "contact with the API server back after 0 s"),
    ]
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 10 * len(KINDS) - 1


def test_a_refused_kind_is_said_once_and_is_no_lost_contact(caplog):
    contact = Contact()
    with caplog.at_level(logging.INFO, logger="app.kube.api.cache"):
        for _ in range(5):
            contact.failed(
                "resourcequotas", "The dashboard's own account may not list ...", "403", refused=True
            )
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["watch of resourcequotas refused"]


def test_lines_logged_about_a_cluster_name_it_in_the_threads_it_starts():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.Formatter(logs.FORMAT))
    handler.addFilter(logs.ClusterField())
    logger = logging.getLogger("extres.test-cluster-field")
    logger.addHandler(handler)
    try:
        with logs.about("b"):
            thread = workers.start("test", lambda: logger.warning("from a thread"))
        thread.join(5)
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    said = {line["message"]: line.get("cluster") for line in map(json.loads, stream.getvalue().splitlines())}
    assert said == {"from a thread": "b", "outside": None}
    config = logs.config("INFO")  # the process's handler carries the field
    assert config["handlers"]["stderr"]["filters"] == ["cluster"]


def test_a_version_that_cannot_be_read_is_said_once_not_at_every_relist(caplog):
    from app.kube.api.cache import ClusterCache

    class Down:
        def param_serialize(self, *args, **kwargs):
            raise ConnectionRefusedError("refused")

    cache = ClusterCache(Down())  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO):
        for _ in range(5):
            cache._readers(relist=True)
    said = [r for r in caplog.records if "version could not be read" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]
