"""The shared language: days, times, numbers, amounts and what a caller means, read alike by the
scripted agent, the referee and the grader."""
