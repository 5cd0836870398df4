# graphmem's API server for docker-compose.yml (which points it at Neo4j with GRAPHMEM_NEO4J_URI).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    GRAPHMEM_DATA_DIR=/data

WORKDIR /app
# torch first, the CPU build from PyTorch's own wheel index: PyPI's default is a multi-GB CUDA build.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md ./
COPY graphmem ./graphmem
COPY cypher ./cypher
# A regular install: the wheel carries cypher/ as graphmem.cypher (tests/test_wheel.py checks it).
RUN pip install . \
    && useradd --system --uid 10001 --home-dir /data graphmem \
    && mkdir -p /data && chown graphmem /data

USER graphmem
EXPOSE 8420
CMD ["graphmem", "serve", "--host", "0.0.0.0", "--port", "8420"]
