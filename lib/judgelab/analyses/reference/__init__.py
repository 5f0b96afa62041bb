"""analyses/reference."""
