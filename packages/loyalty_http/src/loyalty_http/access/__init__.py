"""Who may call: admin and vendor authentication, access tokens, and the rate limiter."""
