"""The lab's typed APIs (django-ninja, OpenAPI at /api/openapi.json) and the tenant rollup page."""
