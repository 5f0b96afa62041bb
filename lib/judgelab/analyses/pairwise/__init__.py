"""analyses/pairwise."""
