"""The per-turn audit of what the agent says: the factuality grade and the grounding audit."""
