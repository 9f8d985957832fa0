"""Reference agents as teams write them: their own tools, ids, results and words."""
