"""Writes to the catalog, one module per thing written. Views, commands and tasks call these; nothing
else writes here. `check_*` validate and never write; `do_*` write (atomically) and report what changed.

- `benchmarks`: a benchmark file (prompts, privileged fields, responses);
- `judgments`: pairwise labels and verdicts from files (generic, MT-Bench, AlpacaEval, Arena);
- `scores`: pointwise scores from files and Inspect logs;
- `ratings`: a person's rating on the rating screen;
- `responses`: models, responses and criteria other apps add one at a time;
- `splits`: a benchmark's held-out split of its prompts (made once, extended to new prompts);
- `importing`: what every import shares (checks, refusals, audit, upserts that never blank).
"""
