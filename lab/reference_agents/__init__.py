"""Reference agents: the lab's scripted agent (and faulty variants) behind real protocols."""
