# Multi-stage: build the virtual environment once, ship it with the code, run as non-root.
FROM python:3.11-slim AS build
WORKDIR /app
RUN python -m venv /venv
COPY pyproject.toml ./
COPY lab ./lab
RUN /venv/bin/pip install --no-cache-dir .

FROM python:3.11-slim
RUN useradd --create-home lab
WORKDIR /app
COPY --from=build /venv /venv
COPY . .
ENV PATH=/venv/bin:$PATH LAB_STATE_DIR=/home/lab/state LAB_ALLOWED_HOSTS=*
USER lab
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/')"
CMD ["sh", "-c", "python manage.py migrate --noinput && daphne -b 0.0.0.0 -p 8000 lab.asgi:application"]
