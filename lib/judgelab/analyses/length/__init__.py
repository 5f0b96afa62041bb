"""analyses/length."""
