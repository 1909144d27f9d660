# expect: leader
# No replica writes the model, and the job does not say it writes none: nothing to deploy.
print("trained", flush=True)
