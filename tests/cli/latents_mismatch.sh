# latents: a shape mismatch, a latent one run lacks, and a copy whose sha256 does not match its event.
# exit: 1
cd "$TMP" || exit 99
npy() {
	/usr/bin/python3 - "$@" <<'EOF'
import sys, hashlib, numpy as np
path, dt, shape = sys.argv[1], sys.argv[2], tuple(int(x) for x in sys.argv[3].split('x') if x)
a = np.array([float(x) for x in sys.argv[4:]], dtype=dt).reshape(shape)
np.save(path, a)
print(hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest())
EOF
}
ev() { # NAME SHA SHAPE FILE
	printf '{"type":"event","kind":"latent","name":"%s","stage":"%s","sha256":"%s","dtype":"float64","shape":%s,"file":"%s","t":1}\n' "$1" "$1" "$2" "$3" "$4"
}
mkdir -p out/lat
a1=$(npy out/lat/e-shape.npy float64 2x3 1 2 3 4 5 6)
a2=$(npy out/lat/s-shape.npy float64 3x2 1 2 3 4 5 6)
n1=$(npy out/lat/e-noise.npy float64 "" 0.5)
c1=$(npy out/lat/e-img.npy float64 2 1 2)
c2=$(npy out/lat/s-img.npy float64 2 1 2)
bad=0000000000000000000000000000000000000000000000000000000000000000
{ printf '{"type":"start","mode":"eager"}\n'; ev shape "$a1" '[2,3]' lat/e-shape.npy
  ev noise "$n1" '[]' lat/e-noise.npy; ev img "$c1" '[2]' lat/e-img.npy; printf '{"type":"end"}\n'; } >out/eager-1.trace.jsonl
{ printf '{"type":"start","mode":"staged"}\n'; ev shape "$a2" '[3,2]' lat/s-shape.npy
  ev img "$bad" '[2]' lat/s-img.npy; } >out/staged-1.trace.jsonl
"$SB" latents out
