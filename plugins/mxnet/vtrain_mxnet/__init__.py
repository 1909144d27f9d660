"""vtrain's MXNet plugin: `vtrain.plugins.get("mxnet").configure()` before `import mxnet`.

Importing this package imports no mxnet; mxnet loads when `configure` runs.
"""

from vtrain_mxnet.handle import MXNetHandle
from vtrain_mxnet.layout import Layout
from vtrain_mxnet.plugin import MXNetPlugin

__all__ = ["Layout", "MXNetHandle", "MXNetPlugin"]
