"""A run in progress: the session that drives agent, gate, tools and the event log."""
