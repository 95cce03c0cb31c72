# latents: usage errors exit 2; a truncated or big-endian .npy is unreadable input (exit 3, file named).
cd "$TMP" || exit 99
"$SB" latents 2>/dev/null; echo "no args: $?"
"$SB" latents --format xml . 2>/dev/null; echo "bad format: $?"
"$SB" latents --help | head -n 1
mkdir -p out
/usr/bin/python3 -c "
import numpy as np
np.save('out/t.npy', np.arange(8, dtype='<f4'))
np.save('out/b.npy', np.arange(2, dtype='>f4'))
d = open('out/t.npy', 'rb').read(); open('out/t.npy', 'wb').write(d[:-4])"
for r in eager-1 eager-2; do printf '{"type":"start","mode":"eager"}\n{"type":"event","kind":"latent","name":"x","stage":"s","sha256":"00","dtype":"float32","shape":[8],"file":"t.npy","t":1}\n{"type":"end"}\n' >out/$r.trace.jsonl; done
"$SB" latents --baseline staged out 2>/dev/null; echo "no such baseline: $?"
"$SB" latents out 2>err; echo "truncated: $?"; sed 's/^/  /' err
sed -i 's/t\.npy/b.npy/; s/\[8\]/[2]/' out/eager-2.trace.jsonl out/eager-1.trace.jsonl
"$SB" latents out 2>err; echo "big-endian: $?"; sed 's/^/  /' err
printf 'not json\n' >out/eager-2.trace.jsonl
"$SB" latents out 2>err; echo "bad trace: $?"; sed 's/^/  /' err
