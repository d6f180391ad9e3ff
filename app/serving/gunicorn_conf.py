"""gunicorn config for the container: ``gunicorn -c app/serving/gunicorn_conf.py 'app:create_app()'``."""

from app.serving import gunicorn_options
from app.settings.config import Settings

globals().update(gunicorn_options(Settings.from_env()))
