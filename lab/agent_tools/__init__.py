"""The agent's own tools: its tools file, what each tool means, and its calls and results read
into the lab's terms and written back in its shapes."""
