"""`glyphoxa-mcp bench`: measured speed on a synthetic campaign at reference scale.

Three separate steps: `dataset` generates a seeded campaign (pure), `loader` puts it into
PostgreSQL with COPY (I/O), and the measuring modules time what the server does with it
(`operations` in process, `stdio` through a `serve` subprocess, `ingestion` through the
real pipeline). `report` turns the figures into a table and JSON.
"""
