"""reporting/card."""
