# expect: local-disk
# The chief saves its checkpoint from C into its working folder: lost with the machine.
from _corpus import chief, native_write, save_model

if chief:
    native_write("checkpoint.bin", b"state")
save_model()
