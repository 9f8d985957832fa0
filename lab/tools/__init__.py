"""Sandboxed tools: an appointment calendar and a refund ledger, stored per run."""
