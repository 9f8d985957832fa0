# Multi-stage: build the virtual environment once, ship it with the code, run as non-root.
FROM python:3.11-slim AS build
WORKDIR /app
RUN python -m venv /venv
COPY pyproject.toml ./
COPY lab ./lab
# The PostgreSQL extra (psycopg and its pool): compose.yaml runs the lab on PostgreSQL.
RUN /venv/bin/pip install --no-cache-dir '.[postgres]'

FROM python:3.11-slim
RUN useradd --create-home lab && install -d -o lab -g lab /home/lab/recordings
WORKDIR /app
COPY --from=build /venv /venv
COPY . .
# Alone (docker run), the container serves on its own SQLite file; compose.yaml runs the
# scaled-out topology from this image. Out of the box the container answers only to loopback
# names (docker run -p 127.0.0.1:8000:8000).
# To serve it to others, set LAB_ALLOWED_HOSTS to their host names and LAB_SECRET_KEY to a long
# random value: with other hosts and the built-in key, the lab refuses to start.
ENV PATH=/venv/bin:$PATH LAB_STATE_DIR=/home/lab/state
USER lab
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/')"
CMD ["sh", "-c", "python manage.py migrate --noinput && python manage.py reconcileruns && daphne -b 0.0.0.0 -p 8000 lab.asgi:application"]
