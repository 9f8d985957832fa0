"""The ordered, append-only event log: the single source of truth of a run."""
