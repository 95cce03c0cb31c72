# latents: two eager and two staged runs; float32 and bfloat16 latents; noise from the eager spread.
# exit: 1
cd "$TMP" || exit 99
# npy PATH DTYPE SHAPE V...: write a .npy (bfloat16 as uint16 bits), print the data's sha256
npy() {
	/usr/bin/python3 - "$@" <<'EOF'
import sys, hashlib, numpy as np
path, dt, shape = sys.argv[1], sys.argv[2], tuple(int(x) for x in sys.argv[3].split('x') if x)
v = [float(x) for x in sys.argv[4:]]
if dt == 'bfloat16':
    a = (np.array(v, dtype='<f4').view('<u4') >> 16).astype('<u2').reshape(shape)
else:
    a = np.array(v, dtype='<' + {'float16': 'f2', 'float32': 'f4', 'float64': 'f8'}[dt]).reshape(shape)
np.save(path, a)
print(hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest())
EOF
}
# run NAME MODE STRUCT_SHA TEX_SHA: a stageload-style trace with two latent events
run() {
	printf '{"type":"start","utc":"2026-10-06T10:00:00+00:00","interval":0.5,"mode":"%s","seed":7}\n' "$2"
	printf '{"type":"event","kind":"stage","stage":"structure","t":1.0}\n'
	printf '{"type":"event","kind":"latent","name":"structure","stage":"structure","sha256":"%s","dtype":"float32","shape":[2,2],"file":"%s.latents/structure.npy","t":1.5}\n' "$3" "$1"
	printf '{"type":"event","kind":"stage","stage":"texture","t":2.0}\n'
	printf '{"type":"event","kind":"latent","name":"texture","stage":"texture","sha256":"%s","dtype":"bfloat16","shape":[3],"file":"%s.latents/texture.npy","t":2.5}\n' "$4" "$1"
	printf '{"type":"end"}\n'
}
mkdir -p out/eager-1.latents out/eager-2.latents out/staged-1.latents out/staged-2.latents
# structure: eager runs differ by 2^-21 at 4.0 (their noise); staged-1 equals eager-1,
# staged-2 is off by 2^-20 (beyond the noise)
a=$(npy out/eager-1.latents/structure.npy float32 2x2 1 2 3 4)
b=$(npy out/eager-2.latents/structure.npy float32 2x2 1 2 3 4.000000476837158)
c=$(npy out/staged-1.latents/structure.npy float32 2x2 1 2 3 4)
d=$(npy out/staged-2.latents/structure.npy float32 2x2 1 2 3 3.999999046325684)
# texture (bfloat16): eager identical, so any staged difference is beyond noise
t1=$(npy out/eager-1.latents/texture.npy bfloat16 3 1 0.5 -2)
t2=$(npy out/eager-2.latents/texture.npy bfloat16 3 1 0.5 -2)
t3=$(npy out/staged-1.latents/texture.npy bfloat16 3 1 0.5 -2)
t4=$(npy out/staged-2.latents/texture.npy bfloat16 3 1.0078125 0.5 -2)
run eager-1 eager "$a" "$t1" >out/eager-1.trace.jsonl
run staged-1 staged "$c" "$t3" >out/staged-1.trace.jsonl
run eager-2 eager "$b" "$t2" >out/eager-2.trace.jsonl
run staged-2 staged "$d" "$t4" >out/staged-2.trace.jsonl
printf '[{"mode":"eager","run":1,"exit":0},{"mode":"staged","run":1,"exit":0},{"mode":"eager","run":2,"exit":0},{"mode":"staged","run":2,"exit":0}]\n' >out/runs.json
"$SB" latents out
