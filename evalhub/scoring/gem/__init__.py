"""GEM / GRE-bench scoring runs: the job kind (runner) and what a finished run says (results)."""
