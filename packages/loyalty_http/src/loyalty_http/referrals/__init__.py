"""The referral programme's admin endpoints (REFERRAL-2, REFERRAL-4)."""
