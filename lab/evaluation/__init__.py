"""The evaluator: verdicts derived from a contract and the ordered events alone."""
