"""The scripted agent: language understanding and dialogue policy."""
