"""Retrieval over the knowledge base: which chunks a turn had in front of it, with scores."""
