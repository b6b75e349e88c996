"""DHP and YESciEval judge runs: the job kind (runner), what a finished run says (results) and its tables."""
