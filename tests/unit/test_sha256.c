/* test_sha256.c -- SHA-256 against the FIPS 180-2 vectors, and incremental updates */
#include <criterion/criterion.h>
#include <string.h>

#include "platform/sha256.h"

static void check_hex(const void *data, size_t len, const char *want)
{
	char hex[SHA256_HEX_BYTES];
	sha256_hex(data, len, hex);
	cr_assert_str_eq(hex, want);
}

Test(sha256, fips_180_2_one_block_abc)
{
	check_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(sha256, empty_input)
{
	check_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(sha256, fips_180_2_two_block_message)
{
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	check_hex(m, strlen(m), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, fips_180_2_one_million_a_fed_in_uneven_pieces)
{
	static char a[1000000];
	memset(a, 'a', sizeof(a));
	check_hex(a, sizeof(a), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

	/* The same message through sha256_update in pieces of 1..97 bytes. */
	struct sha256 ctx;
	uint8_t d[SHA256_DIGEST_BYTES];
	char hex[SHA256_HEX_BYTES];
	sha256_init(&ctx);
	size_t off = 0, step = 1;
	while (off < sizeof(a)) {
		size_t n = step < sizeof(a) - off ? step : sizeof(a) - off;
		sha256_update(&ctx, a + off, n);
		off += n;
		step = step % 97 + 1;
	}
	sha256_final(&ctx, d);
	sha256_to_hex(d, hex);
	cr_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

Test(sha256, padding_boundary_lengths_55_56_64)
{
	/* 55 bytes: length fits the first block; 56: padding spills into a second;
	 * 64: exactly one block of data. Values from Python's hashlib. */
	char m[64];
	memset(m, 'a', sizeof(m));
	check_hex(m, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
	check_hex(m, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
	check_hex(m, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}
