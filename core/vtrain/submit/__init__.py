"""`vtrain submit`: the job rehearsed locally, rendered for Vertex AI, AI Platform or Kubeflow.

`topology` turns the command line into one checked `JobOptions`; `vertex`,
`aiplatform`, `kubeflow` and `trainjob` render it into each engine's document and check it
with the engine's own types or schema; `send_vertex` and `send_kubeflow` send
it; `job_file` reads a rendered or hand-written document back, for
`vtrain submit --job` and for the rehearsal, `vtrain local run --job`.
The engines' libraries (the `submit` extra) are imported only by `sdk`.
"""
