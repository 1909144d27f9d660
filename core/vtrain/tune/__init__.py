"""`vtrain tune`: run a hyperparameter-tuning study locally, one trial as Vertex would run it.

`study` holds the study as values and `study_file` reads one from a file;
`samplers` chooses each trial's parameters; `runner` starts the trials, with
the environment `trial_env` gives them, and keeps `results` in study.json;
`table` is what the command prints. Only `vtrain tune` imports this package.
Training code reports its metric with `vtrain.hypertune.report`.
"""
