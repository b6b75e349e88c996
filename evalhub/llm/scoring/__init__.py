"""Log-probability scoring of forced answers (GEM) and next-token distributions (Likert judging)."""
