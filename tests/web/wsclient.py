"""The loopback WebSocket client now lives with the cluster tools, which share it with tests."""

from lab.cluster.wsclient import CLOSE, TEXT, WebSocket, WebSocketClosed

__all__ = ["CLOSE", "TEXT", "WebSocket", "WebSocketClosed"]
