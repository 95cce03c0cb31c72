/* fuzz_trace_zstd.c -- the trace reader's zstd path: the input is text,
 * compressed here as the writer does (frames with checksums, split where the
 * first byte says), sometimes cut short, so that the fuzzer explores the
 * records behind the decompression and the frame bookkeeping */
#include "fuzz.h"

#include <zstd.h>

#include "analyze/analysis.h"
#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned ctl = data[0];
	data++;
	size--;
	/* up to four frames, split at fractions chosen by ctl */
	size_t nframes = 1 + (ctl & 3);
	size_t cap = ZSTD_compressBound(size) + nframes * 32;
	uint8_t *z = malloc(cap);
	size_t zlen = 0;
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	size_t at = 0;
	for (size_t f = 0; f < nframes; f++) {
		size_t end = f + 1 == nframes ? size : size * (f + 1) / nframes;
		size_t n = ZSTD_compress2(cctx, z + zlen, cap - zlen, data + at, end - at);
		if (ZSTD_isError(n))
			abort();
		zlen += n;
		at = end;
	}
	ZSTD_freeCCtx(cctx);
	if (ctl & 4) /* cut the last frame short */
		zlen -= 1 + (ctl >> 3) % (zlen < 8 ? 1 : 8);
	if (ctl & 0x80 && zlen > 12) /* flip a bit inside */
		z[zlen / 2] ^= (uint8_t)(1u << (ctl & 7));
	struct trace tr;
	trace_read_mem("fuzz.trace.jsonl.zst", z, zlen, &tr);
	struct analysis a = ANALYSIS_INIT;
	if (tr.has_start)
		analysis_run(&tr, NULL, &a);
	analysis_release(&a);
	trace_release(&tr);
	free(z);
	return 0;
}
