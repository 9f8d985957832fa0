"""The per-turn audit records: one row per agent turn, written once, for every channel."""
