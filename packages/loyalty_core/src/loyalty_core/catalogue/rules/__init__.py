"""The catalogue's pure rules: batch sizes and duplicates, metadata as compact JSON, the names'
phone-book order."""
