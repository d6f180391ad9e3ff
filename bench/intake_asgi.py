"""bench/intake.py's ``asgi+a2wsgi`` candidate: gunicorn's own asyncio worker (it serves ASGI
only) with the app behind a2wsgi's WSGI bridge, run as ``gunicorn -c python:bench.intake_asgi
bench.intake_asgi:app``. The served options but the worker's hooks (they start the cluster's
watches from a WSGI worker's app; the cluster here is unreachable anyway). a2wsgi is not a
dependency of the project."""

from a2wsgi import WSGIMiddleware

from app import create_app
from app.serving import gunicorn_options
from app.settings.config import Settings

_options = gunicorn_options(Settings.from_env())
for _hook in ("post_worker_init", "worker_exit"):
    del _options[_hook]
_options["worker_class"] = "asgi"
globals().update(_options)

app = WSGIMiddleware(create_app())
