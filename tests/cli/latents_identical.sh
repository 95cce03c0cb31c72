# latents: identical copies across runs (one trace zstd-compressed, float16 0-d) exit 0; --format json.
cd "$TMP" || exit 99
mkdir -p out/l
h=$(/usr/bin/python3 -c "
import hashlib, numpy as np
a = np.array(0.333, dtype='<f2'); np.save('out/l/z.npy', a)
print(hashlib.sha256(a.tobytes()).hexdigest())")
for r in eager-1 staged-1 staged-2; do
	printf '{"type":"start","mode":"%s"}\n{"type":"event","kind":"latent","name":"z","stage":"decode","sha256":"%s","dtype":"torch.float16","shape":[],"file":"l/z.npy","t":1}\n{"type":"end"}\n' "${r%-*}" "$h" >out/$r.trace.jsonl
done
zstd -q --rm out/staged-2.trace.jsonl
"$SB" latents out; echo "md: $?"
"$SB" latents --format json out | /usr/bin/python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['baseline'], [r['id'] for r in d['runs']], d['findings'])
for l in d['latents']:
    print(l['name'], l['spread'], [(p['a'], p['b'], p['result']) for p in l['pairs']])"
