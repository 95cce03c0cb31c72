/* fuzz_npy.c -- the .npy reader (latent copies): header checks, then every
 * element read back through npy_get() */
#include "fuzz.h"

#include "analyze/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct npy_array a = NPY_ARRAY_INIT;
	if (npy_parse("fuzz.npy", data, size, &a) == 0) {
		if (a.count * a.itemsize != a.data_bytes)
			abort();
		volatile double sum = 0;
		/* raw 16-bit elements mean nothing until the caller says bfloat16 */
		for (uint64_t i = 0; a.dtype != NPY_RAW16 && i < a.count && i < 4096; i++)
			sum += npy_get(&a, i);
		if (!npy_as_bfloat16(&a))
			for (uint64_t i = 0; i < a.count && i < 4096; i++)
				sum += npy_get(&a, i);
		(void)sum;
	}
	npy_release(&a);
	return 0;
}
