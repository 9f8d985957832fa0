"""Connectors: outside agents behind the lab's one narrow agent interface (OpenAI-compatible,
pipecat eval wire, MCP), and the sandboxed tools as they are offered to them."""
