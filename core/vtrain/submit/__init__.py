"""`vtrain submit`: the job rehearsed locally, rendered for Vertex AI, AI Platform or Kubeflow.

`JobOptions.from_options` (`options`) checks a job given as typed options
(`request`, `values`, `pools`, `study`, and each engine's `rules`). An engine is
one folder (`vertex/`, `aiplatform/`, `kubeflow/`) that exports one `ENGINE`
(`engine.Engine`): its rules and flags, and how it renders a job, checks a
document with its own types or schema, sends it, and reads it into a rehearsal.
`engines` lists them, for `flow` (submit and render), `job_file` (`--job`),
`rehearse` (`vtrain local run --job`) and `vtrain.cli.submit`. The engines'
client libraries (the `submit` extra) are imported by `sdk` alone, inside its
loaders, and only when a path needs them; a staged --python-package is uploaded
through `vtrain.storage`, like every gs:// write.
"""
