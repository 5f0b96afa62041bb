"""analyses/juries."""
