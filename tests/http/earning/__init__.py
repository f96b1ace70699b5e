"""The admin API of earn rules and campaigns."""
