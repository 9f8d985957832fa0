"""The second pair of team-written agents: a salon's Chat Completions agent, a bike shop's brain."""
