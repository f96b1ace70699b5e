"""The ladder's admin endpoints and the public ``GET /api/v1/tiers`` (TIER-7)."""
