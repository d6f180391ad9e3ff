"""gunicorn config for the container: ``gunicorn -c app/serving/gunicorn_conf.py 'app:create_app()'``."""

from app.config import Settings
from app.serving import gunicorn_options

globals().update(gunicorn_options(Settings.from_env()))
