"""AI Platform Training (retired on 2025-01-31): config.yaml and the gcloud command, never sent.

`rules` checks a command line for AI Platform; `render` builds config.yaml;
`job` checks a document against the ml v1 schema (`schema`) and AI Platform's
rules; `gcloud` prints it with the equivalent command; `hyperparameters`
writes and reads a study; `rehearse` reads a document into a local rehearsal. `flags` are its own
command-line flags; `ENGINE` is all of it, as `vtrain.submit.engines` lists it.
"""

from vtrain.submit.aiplatform import gcloud, job, rehearse, render
from vtrain.submit.aiplatform.flags import FLAGS
from vtrain.submit.aiplatform.rules import RULES
from vtrain.submit.engine import Engine

ENGINE = Engine(
    name="aiplatform",
    about="AI Platform Training's config.yaml and gcloud command (retired: render only)",
    rules=RULES,
    title="AI Platform",
    flags=FLAGS,
    render=render.render,
    recognizes=job.recognizes,
    load=job.load,
    shape=job.SHAPE,
    rename=job.rename,
    rehearse=rehearse.rehearse,
    show=gcloud.show,
)
