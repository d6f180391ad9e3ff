# extres: gunicorn serving create_app(), as a non-root user, with no build tools in the image.

FROM python:3.11-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
# Install the dependencies into a venv; the app itself runs from /srv/extres (with its templates).
RUN python -m venv /opt/extres \
    && /opt/extres/bin/pip install . \
    && /opt/extres/bin/pip uninstall --yes extres

FROM python:3.11-slim-bookworm
RUN useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin extres
COPY --from=build /opt/extres /opt/extres
WORKDIR /srv/extres
COPY app ./app
COPY templates ./templates
COPY static ./static
ENV PATH=/opt/extres/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    EXTRES_HOST=0.0.0.0 \
    EXTRES_PORT=8080
USER 10001:10001
EXPOSE 8080
CMD ["gunicorn", "--config", "app/gunicorn_conf.py", "app:create_app()"]
