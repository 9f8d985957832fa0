"""Pages, WebSocket consumer and the live panel."""
