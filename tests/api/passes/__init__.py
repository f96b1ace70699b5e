"""The passes area through the composed service."""
