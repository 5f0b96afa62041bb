"""analyses/contexteval."""
