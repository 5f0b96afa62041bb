"""analyses/correctness."""
