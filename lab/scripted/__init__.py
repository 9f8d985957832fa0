"""The scripted agent: the lab's own agent under test, its dialogue policy and its fixed lines."""
