"""Campaign mail: a shop's mailings (drafts, the audience's criteria), the per-recipient rows that
let each customer get at most one message per mailing, the audience's query, and the work the
sending job does over them (MAIL-1 to MAIL-18)."""
