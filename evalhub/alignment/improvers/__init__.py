"""Ways to improve a judge, each reading people's labels only through `evalhub.alignment.training_set`."""
