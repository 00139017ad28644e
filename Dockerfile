# Production image: the web app only (no test tools). Build and run:
#   docker build -t gradtrace . && docker run --rm -p 8000:8000 gradtrace
# Stage 1: Pyodide for the own-engine page (/own), from npm's package at the pinned version and
# integrity (scripts/pyodide), so that the image serves it from its own origin, offline.
FROM node:20-bookworm-slim AS pyodide
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY scripts/pyodide ./scripts/pyodide
RUN bash scripts/pyodide

# Stage 2: the app.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    GRADTRACE_ASSETS=/srv/gradtrace \
    OPENBLAS_NUM_THREADS=1

# Graphviz's `dot` draws every graph; its dependencies bring a default font. librsvg2-bin
# (rsvg-convert) draws the PNGs of `gradtrace render`, the command-line exports.
RUN apt-get update \
    && apt-get install -y --no-install-recommends graphviz librsvg2-bin \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 gradtrace

WORKDIR /srv/gradtrace
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY app ./app
COPY gradtrace ./gradtrace
COPY templates ./templates
COPY static ./static
COPY --from=pyodide /build/static/pyodide ./static/pyodide
# templates/ and static/ are not Python packages: the app finds them here, beside app/, and
# `gradtrace render --html` through GRADTRACE_ASSETS.
RUN pip install .

USER gradtrace
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]

# One worker: without GRADTRACE_REDIS_URL a class's room lives in its process, so every socket of
# a room must reach the same one. With Redis, run more (docker-compose.yml runs replicas of two).
# The same uvicorn options as scripts/serve and docker-compose.yml: a websocket message past
# 64 KiB is refused before the app reads it (uvicorn's default, 16 MiB, let 60 sockets take
# 2.8 GB; the app's own bound is 16 KiB), and no permessage-deflate (a room's messages are
# small, and compressing each one for every student's socket cost 3-5x the CPU: python -m
# bench.rooms --deflate). X-Forwarded-For is read only from a proxy in this container
# (127.0.0.1, uvicorn's default, said here): behind one, set --forwarded-allow-ips to its
# address alone. Open files: the app raises its soft limit to GRADTRACE_OPEN_FILES (65536)
# itself, up to the hard limit (Docker's is 524288; `docker run --ulimit nofile=65536:65536`
# pins it).
CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000", "--workers", "1", "--no-access-log", "--proxy-headers", "--forwarded-allow-ips=127.0.0.1", "--ws-max-size=65536", "--ws-per-message-deflate=false"]
