# expect: ready
# The job succeeds.
from _corpus import save_model

save_model()
