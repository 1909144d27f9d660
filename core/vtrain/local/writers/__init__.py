"""The environment writers: what each platform sets on a replica, one module per platform.

They write what the readers in `vtrain.cluster` read. Each module's `variables`
gives one replica's platform variables; `shared` holds what several write, and
`vtrain.local.environment.WRITERS` names each platform's writer.
"""
