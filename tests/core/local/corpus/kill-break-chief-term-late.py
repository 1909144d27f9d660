# expect: kill
# run: --workers 1 --kill chief:0@20:TERM
# A preemption asked for at 20 s, in a job that ends first.
from _corpus import save_model

save_model()
