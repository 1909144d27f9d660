"""Publishing a model: written to a local scratch folder first, then put in its place.

Frameworks save to local paths; the model folder may be gs:// (with or without
the /gcs/ mount), where a half-written file would be visible. Writing locally
and uploading the finished files works the same everywhere.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping

from vtrain.storage.opener import open_location


def publish_model(
    write: Callable[[str], str],
    folder: str,
    *,
    upload: bool = True,
    environ: Mapping[str, str] | None = None,
    also: Callable[[str], object] | None = None,
) -> str | None:
    """Run `write(scratch)`, which returns the main file's name, then upload what it wrote.

    Returns the main file's URI in `folder`; None, with nothing uploaded, when
    `upload` is False (a replica that must take part in a collective save but
    does not keep its copy). `also` gets the main file's local path after the upload
    (the tracked run's copy), while it still exists.
    """
    with tempfile.TemporaryDirectory(prefix="vtrain-model-") as scratch:
        name = write(scratch)
        if not upload:
            return None
        target = open_location(folder, environ=environ)
        target.makedirs()
        for entry in sorted(os.listdir(scratch)):  # a file (.pt) or a folder (SavedModel)
            target.upload(os.path.join(scratch, entry), entry)
        if also is not None:
            also(os.path.join(scratch, name))
    return target.join(name).uri
