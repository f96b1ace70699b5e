"""A shop's own people: portal users, their server-side sessions and the sign-in lockout."""
