"""forked.py -- a 1 GiB parent that forks 4 workers (multiprocessing's "fork"), each idle 2 s.
The memory really in use is about 1 GiB (plus the interpreter's)."""
import multiprocessing as mp
import time

def work(_):
    time.sleep(2)
    return 0

if __name__ == "__main__":
    held = bytearray(1 << 30)
    for i in range(0, len(held), 4096):
        held[i] = 1
    with mp.get_context("fork").Pool(4) as pool:
        pool.map(work, range(4))
