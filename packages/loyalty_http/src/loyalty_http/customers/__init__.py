"""Public customer endpoints and the unsubscribe link."""
