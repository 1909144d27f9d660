# expect: kill
# run: --workers 1 --kill worker:0@30
# The job ends in a fraction of a second: the kill at 30 s never fires.
from _corpus import save_model

save_model()
