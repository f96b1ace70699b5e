"""The OAuth 2 client-credentials token endpoint."""
