"""The environment writers: what each platform sets on a replica, one module per platform.

They write what the readers in `vtrain.cluster` read. Each module's `variables`
gives one replica's platform variables; `vtrain.local.environment` imports the
one a job's platform names, and only that one.
"""
