"""analyses/overview."""
