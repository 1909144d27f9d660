"""Kubeflow: a Trainer v2 TrainJob, or a training-operator v1 job (TFJob, PyTorchJob, XGBoostJob).

`kinds` is what the operator expects of each v1 kind; a plugin's `kubeflow`
declaration picks one (`rules` checks it and the command line). `render`
builds the manifest (`trainjob` the TrainJob), `manifest` checks one read back
with the clients' own models, `send` creates it through the kubeconfig, and
`rehearse` reads one into a local rehearsal. `flags` are its own
command-line flags; `ENGINE` is all of it, as `vtrain.submit.engines` lists it.
"""

from vtrain.submit.engine import Engine
from vtrain.submit.kubeflow import manifest, rehearse, render, runtimes, send
from vtrain.submit.kubeflow.flags import FLAGS
from vtrain.submit.kubeflow.rules import RULES

ENGINE = Engine(
    name="kubeflow",
    about="a Kubeflow Trainer v2 TrainJob with --trainjob, on the runtime --framework's "
    "plugin names; without it, the training operator's v1 job of the kind the plugin "
    "declares (TFJob, PyTorchJob, XGBoostJob: an API Kubeflow is retiring), or a Katib "
    "Experiment of such jobs with --study",
    rules=RULES,
    title="Kubeflow",
    flags=FLAGS,
    render=render.render,
    recognizes=manifest.recognizes,
    load=manifest.load,
    shape=manifest.SHAPE,
    rename=manifest.rename,
    rehearse=rehearse.rehearse,
    send=send.submit,
    runtime=runtimes.runtime_document,
)
