"""Vertex AI custom training: a CustomJob, or a HyperparameterTuningJob with a study.

`rules` checks a command line for Vertex (and refuses Vertex's own options
elsewhere); `render` builds the job; `job` checks a document with the SDK's
types; `send` creates it and follows it; `staging` builds and uploads
--python-package; `rehearse` reads a document into a local rehearsal.
"""
