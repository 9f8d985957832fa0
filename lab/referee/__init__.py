"""The referee: what an agent not ours offered and did, against what the caller meant."""
