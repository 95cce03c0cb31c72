/* npy.h -- a strict reader for NumPy .npy files holding float arrays
 *
 * Accepted: format versions 1.0, 2.0 and 3.0 (2-byte or 4-byte header
 * length; v3 only allows a UTF-8 header, which changes nothing here), a
 * header dict with exactly the keys 'descr', 'fortran_order' and 'shape',
 * any shape including 0-d `()` and zero-size arrays, and these descr:
 *
 *   '<f2'                  NPY_F16   IEEE half
 *   '<f4'                  NPY_F32   IEEE single
 *   '<f8'                  NPY_F64   IEEE double
 *   '<V2' '|V2' '<u2' '<i2' NPY_RAW16 two raw bytes per element
 *
 * NumPy has no bfloat16, so a bfloat16 array is stored as two raw bytes per
 * element (the probe saves `tensor.view(torch.uint16)` as '<u2'; ml_dtypes
 * writes '<V2'). The file alone cannot say those bytes are bfloat16: the
 * caller decides from the latent event's dtype and calls npy_as_bfloat16().
 * Refused with a clear message: big-endian ('>f4'), fortran_order True,
 * structured or any other dtype, a truncated file, trailing bytes after the
 * data, a malformed header. The data is never interpreted before the header
 * checks out, so a garbage file gives an error, not a crash.
 *
 * The element bytes are kept as in the file: little-endian, C order. That is
 * what latent sha256 fingerprints cover (see analyze/latents.h).
 *
 * Call order: struct npy_array a = NPY_ARRAY_INIT; npy_read(path, &a) (or
 * npy_parse); use; npy_release(&a) (also after a failed read).
 */
#ifndef SB_NPY_H
#define SB_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_DIMS 32

enum npy_dtype {
	NPY_NONE = 0,
	NPY_F16,
	NPY_BF16,  /* only after npy_as_bfloat16() */
	NPY_F32,
	NPY_F64,
	NPY_RAW16, /* '<V2', '|V2', '<u2', '<i2': two bytes whose meaning the file does not say */
};

struct npy_array {
	int version;            /* 1, 2 or 3 (major) */
	char descr[16];         /* as written in the header, e.g. "<f4" */
	enum npy_dtype dtype;
	size_t itemsize;        /* bytes per element: 2, 4 or 8 */
	int ndim;               /* 0 for a 0-d array */
	int64_t shape[NPY_MAX_DIMS];
	uint64_t count;         /* elements (1 for 0-d, 0 when a dimension is 0) */
	const uint8_t *data;    /* count * itemsize bytes, little-endian, C order */
	size_t data_bytes;
	/* private: the file contents `data` points into */
	char *buf_;
};
#define NPY_ARRAY_INIT { 0 }

/* Read and check PATH. 0, or -1 after error() "PATH: what is wrong". */
int npy_read(const char *path, struct npy_array *a);
/* The same from an open file (read to its end); NAME names it in messages. */
int npy_read_fd(const char *name, int fd, struct npy_array *a);
/* The same from memory; `name` is used in messages. The bytes are copied. */
int npy_parse(const char *name, const void *bytes, size_t len, struct npy_array *a);
void npy_release(struct npy_array *a); /* NULL ok; leaves *a as NPY_ARRAY_INIT */

/* Reinterpret NPY_RAW16 (or NPY_BF16) data as bfloat16. 0, or -1 (no message)
 * when the array holds anything else. */
int npy_as_bfloat16(struct npy_array *a);

/* Element i (flat, C order) widened to double; exact for every dtype. */
double npy_get(const struct npy_array *a, uint64_t i);

/* "float16", "bfloat16", "float32", "float64", "raw16" (NPY_RAW16). */
const char *npy_dtype_name(enum npy_dtype t);
/* Parse an event's dtype: "float32" or "torch.float32" (and "half", "float",
 * "double", "bfloat16"); NPY_NONE when unknown or NULL. */
enum npy_dtype npy_dtype_from_name(const char *name);

/* Half and bfloat16 bit patterns to double (exact). */
double npy_half_to_double(uint16_t h);
double npy_bfloat16_to_double(uint16_t b);

#endif
