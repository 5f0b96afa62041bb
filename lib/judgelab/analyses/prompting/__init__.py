"""analyses/prompting."""
