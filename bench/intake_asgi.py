"""The app behind a2wsgi's WSGI-to-ASGI bridge, for bench/intake.py's ``asgi+a2wsgi`` candidate
(gunicorn's asyncio worker serves ASGI only). a2wsgi is not a dependency of the project."""

from a2wsgi import WSGIMiddleware

from app import create_app

app = WSGIMiddleware(create_app())
