"""HTTP layer of rewards: the admin-portal endpoints (public reward routes join here)."""
