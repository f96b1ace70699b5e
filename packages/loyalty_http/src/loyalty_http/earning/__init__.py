"""Admin HTTP API of earn rules and campaigns."""
