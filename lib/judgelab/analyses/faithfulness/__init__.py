"""analyses/faithfulness."""
