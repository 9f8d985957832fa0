"""The evaluator's checks, one module per assertion family."""
