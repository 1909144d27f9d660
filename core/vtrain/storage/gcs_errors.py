"""The storage client's errors as vtrain's: one `StorageError` that names the gs:// location.

Without credentials, google.auth raises its own errors (DefaultCredentialsError when
the client is made, RefreshError or TransportError at the first request); each
becomes one line that names the location and the ways to get credentials.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

from vtrain.errors import MissingExtraError, StorageError

NAME = "gs:// locations"
NO_CREDENTIALS = "no Google credentials to reach Cloud Storage with"
CREDENTIALS_HINT = (
    "run `gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to a "
    "service account's key file, or read the bucket through its /gcs/ mount (/gcs/BUCKET/...)"
)


def google_exceptions(package: str = "api_core") -> Any:
    """`google.api_core.exceptions` (or `google.auth.exceptions`), or the extra to install.

    Imported before the client is made (entering api_errors): a missing package must be
    reported with its extra here too, not as ModuleNotFoundError: google.
    """
    try:
        return importlib.import_module(f"google.{package}.exceptions")
    except ImportError as e:
        raise MissingExtraError(NAME, "gcs", module="google.cloud.storage") from e


def no_credentials(where: str, name: str = "", problem: str = NO_CREDENTIALS) -> StorageError:
    """The one error for a gs:// location that google.auth found no credentials for."""
    return StorageError(problem, source=where, path=name or None, hint=CREDENTIALS_HINT)


@contextlib.contextmanager
def api_errors(operation: str, where: str, name: str = "") -> Iterator[None]:
    """The client's errors inside as one `StorageError` naming `where` and `name`."""
    exceptions = google_exceptions()
    auth = google_exceptions("auth")

    try:
        yield
    except auth.GoogleAuthError as e:
        # Raised by the first request, not by the client: credentials that cannot be
        # refreshed (a revoked login, a metadata server that does not answer).
        problem = f"cannot {operation}: {NO_CREDENTIALS} ({type(e).__name__})"
        raise no_credentials(where, name, problem) from e
    except exceptions.NotFound as e:
        raise StorageError(f"cannot {operation}: not found", source=where, path=name or None) from e
    except exceptions.GoogleAPIError as e:
        raise StorageError(
            f"cannot {operation}: {e}",
            source=where,
            path=name or None,
            hint="check the bucket name, the credentials and the network",
        ) from e
