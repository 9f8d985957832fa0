"""The agent under test: one narrow interface, the scripted agent and the connectors behind it."""
