"""GPU usage from the operator's Prometheus: the one client (prometheus.py) and the poller that
keeps its last answers for every page (poller.py). Pages never wait on Prometheus."""
