# expect: ready
# A job outside a study reports a metric of its own: nothing asked for one.
from _corpus import save_model

from vtrain.hypertune import report

report(0.1, tag="loss")
save_model()
