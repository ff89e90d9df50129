"""The checker's rules: words (tokens, numbers, names), sentences and clauses, the cited lines as read, the rules."""
