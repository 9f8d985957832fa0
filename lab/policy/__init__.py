"""The deterministic policy gate: decides every tool request from the event log alone."""
