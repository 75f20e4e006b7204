# Attention Explorer as one container: `streamlit run app.py` on port 8501.
#   docker build -t attention-explorer .
#   docker run --rm -p 8501:8501 attention-explorer
# Several replicas: see deploy/README.md (sticky sessions are required).
FROM python:3.11-slim

# STREAMLIT_SERVER_FILE_WATCHER_TYPE=none: a server does not watch its source files for changes.
# MALLOC_ARENA_MAX=2: two glibc heaps for all threads from the start (ui/cache.py sets the same
# cap when the app is first run, if the environment has not).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STREAMLIT_SERVER_FILE_WATCHER_TYPE=none \
    MALLOC_ARENA_MAX=2

# An unprivileged user (uid 10001) runs the app; the code stays owned by root, read-only to it.
RUN groupadd --gid 10001 app \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin app

WORKDIR /app

# The requirements first, so that editing the app does not reinstall them.
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

# The app: the entry point, its settings, and the packages it imports.
COPY app.py ./
COPY .streamlit/config.toml .streamlit/config.toml
COPY assets/ assets/
COPY attention_core/ attention_core/
COPY pages/ pages/
COPY ui/ ui/

# Numeric, so that Kubernetes (runAsNonRoot) can see that it is not root.
USER 10001:10001

EXPOSE 8501

# python:3.11-slim has no curl: ask the health endpoint with Python's urllib (any error exits 1).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.headless", "true"]
