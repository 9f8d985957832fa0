"""Voice Reliability Lab: audio, transcript, agent, gate, tools, events, evaluator, report."""

__version__ = "0.1.0"
