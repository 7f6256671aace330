"""The library wing: attnkit, the exercise checks, the grader's pure-Python parts. Builds nothing."""
