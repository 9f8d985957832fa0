"""Scenario contracts: versioned data in the repository's scenarios/ folder."""
