"""spike.py -- 100 MiB held; inside it a 200 MiB spike held 50 ms; 1 s before and after.
The true peak is about 300 MiB (plus the interpreter's)."""
import time

def touch(n):
    b = bytearray(n)
    for i in range(0, n, 4096):
        b[i] = 1
    return b

if __name__ == "__main__":
    base = touch(100 << 20)
    time.sleep(1)
    spike = touch(200 << 20)
    time.sleep(0.05)
    del spike
    time.sleep(1)
