"""Benchmarks: run with .venv/bin/python -m benchmarks.<name>; figures go to docs/benchmarks.md."""
