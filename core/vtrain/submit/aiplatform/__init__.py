"""AI Platform Training (retired on 2025-01-31): config.yaml and the gcloud command, never sent.

`rules` checks a command line for AI Platform; `render` builds config.yaml;
`job` checks a document against the ml v1 schema (`schema`) and AI Platform's
rules; `gcloud` prints it with the equivalent command; `hyperparameters`
writes and reads a study; `rehearse` reads a document into a local rehearsal.
"""
