"""Vertex AI custom training: a CustomJob, or a HyperparameterTuningJob with a study.

`rules` checks a command line for Vertex (and refuses Vertex's own options
elsewhere); `render` builds the job; `job` checks a document with the SDK's
types; `send` creates it and follows it; `staging` builds and uploads
--python-package; `rehearse` reads a document into a local rehearsal. `flags` are its own
command-line flags; `ENGINE` is all of it, as `vtrain.submit.engines` lists it.
"""

from vtrain.submit.engine import Engine
from vtrain.submit.vertex import job, rehearse, render, send
from vtrain.submit.vertex.flags import FLAGS
from vtrain.submit.vertex.rules import RULES

ENGINE = Engine(
    name="vertex",
    about="a Vertex AI CustomJob, or a HyperparameterTuningJob with --study",
    rules=RULES,
    title="Vertex AI",
    flags=FLAGS,
    render=render.render,
    recognizes=job.recognizes,
    load=job.load,
    shape=job.SHAPE,
    rename=job.rename,
    rehearse=rehearse.rehearse,
    send=send.submit,
    follows=True,
)
