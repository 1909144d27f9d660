"""Kubeflow: a training-operator v1 job (TFJob, PyTorchJob, XGBoostJob) or a Trainer v2 TrainJob.

`kinds` is what the operator expects of each v1 kind; a plugin's `kubeflow`
declaration picks one (`rules` checks it and the command line). `render`
builds the manifest (`trainjob` the TrainJob), `manifest` checks one read back
with the clients' own models, `send` creates it through the kubeconfig, and
`rehearse` reads one into a local rehearsal.
"""
