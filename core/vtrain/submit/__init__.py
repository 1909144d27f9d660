"""`vtrain submit`: the job rehearsed locally, rendered for Vertex AI, AI Platform or Kubeflow.

`JobOptions.from_options` (`options`) checks a job given as typed options
(`request`, `values`, `pools`, `study`, and each engine's `rules`); each engine's
folder (`vertex/`, `aiplatform/`, `kubeflow/`) renders it, checks a document
with the engine's own types or schema, sends it, and reads it into a
rehearsal; `engines` is the table of those functions, which `flow` (submit
and render), `job_file` (`--job`) and `rehearse` (`vtrain local run --job`)
call. The engines' client libraries (the `submit` extra) are imported by
`sdk` alone, inside its loaders, and only when a path needs them; a staged
--python-package is uploaded through `vtrain.storage`, like every gs:// write.
"""
