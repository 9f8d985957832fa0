"""A tenant's versioned factual constraint list and the knowledge base derived from it."""
