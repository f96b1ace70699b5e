"""Customer writes by concern: identifiers and cards, profile updates, consent, status changes."""
