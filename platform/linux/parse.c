/* parse.c -- parsers for /proc status, meminfo and children text (pure; stat: procfs.c) */
#include "linux.h"

#include <string.h>

/* Skip blanks, read a decimal number; *p is left after it. */
static uint64_t read_u64(const char **p, const char *end)
{
	const char *s = *p;
	uint64_t v = 0;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	while (s < end && *s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	*p = s;
	return v;
}

/* A "Key:   N kB" value in bytes (the kernel always writes kB). */
static uint64_t read_kb(const char **p, const char *end)
{
	return read_u64(p, end) * 1024;
}

#define KEY(k) (n >= sizeof(k) - 1 && !memcmp(s, k, sizeof(k) - 1) && \
		(s += sizeof(k) - 1, 1))

void linux_parse_status(const char *buf, size_t len, struct status_fields *f)
{
	const char *s = buf, *end = buf + len;
	memset(f, 0, sizeof(*f));
	while (s < end) {
		size_t n = (size_t)(end - s);
		switch (*s) {
		case 'V':
			if (KEY("VmRSS:")) {
				f->vm_rss = read_kb(&s, end);
				f->have |= ST_VM_RSS;
			} else if (KEY("VmSwap:")) {
				f->vm_swap = read_kb(&s, end);
				f->have |= ST_VM_SWAP;
			} else if (KEY("VmHWM:")) {
				f->vm_hwm = read_kb(&s, end);
				f->have |= ST_VM_HWM;
			}
			break;
		case 'R':
			if (KEY("RssAnon:")) {
				f->rss_anon = read_kb(&s, end);
				f->have |= ST_RSS_ANON;
			} else if (KEY("RssShmem:")) {
				f->rss_shmem = read_kb(&s, end);
				f->have |= ST_RSS_SHMEM;
			} else if (KEY("RssFile:")) {
				f->rss_file = read_kb(&s, end);
				f->have |= ST_RSS_FILE;
			}
			break;
		case 'T':
			if (KEY("Threads:")) {
				f->threads = (int)read_u64(&s, end);
				f->have |= ST_THREADS;
			}
			break;
		case 'S':
			if (KEY("State:")) {
				while (s < end && (*s == ' ' || *s == '\t'))
					s++;
				if (s < end) {
					f->state = *s;
					f->have |= ST_STATE;
				}
			}
			break;
		}
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		s = nl + 1;
	}
}

void linux_parse_meminfo(const char *buf, size_t len, struct meminfo_fields *f)
{
	const unsigned all = MI_MEM_TOTAL | MI_MEM_AVAILABLE | MI_SWAP_TOTAL | MI_SWAP_FREE |
			     MI_SHMEM;
	const char *s = buf, *end = buf + len;
	memset(f, 0, sizeof(*f));
	while (s < end && f->have != all) {
		size_t n = (size_t)(end - s);
		if (*s == 'M') {
			if (KEY("MemTotal:")) {
				f->mem_total = read_kb(&s, end);
				f->have |= MI_MEM_TOTAL;
			} else if (KEY("MemAvailable:")) {
				f->mem_available = read_kb(&s, end);
				f->have |= MI_MEM_AVAILABLE;
			}
		} else if (*s == 'S') {
			if (KEY("SwapTotal:")) {
				f->swap_total = read_kb(&s, end);
				f->have |= MI_SWAP_TOTAL;
			} else if (KEY("SwapFree:")) {
				f->swap_free = read_kb(&s, end);
				f->have |= MI_SWAP_FREE;
			} else if (KEY("Shmem:")) {
				f->shmem = read_kb(&s, end);
				f->have |= MI_SHMEM;
			}
		}
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		s = nl + 1;
	}
}

void linux_parse_rollup(const char *buf, size_t len, struct rollup_fields *f)
{
	const char *s = buf, *end = buf + len;
	memset(f, 0, sizeof(*f));
	const unsigned all = RU_PSS_ANON | RU_PSS_SHMEM | RU_RSS | RU_PSS | RU_PRIVATE_DIRTY |
			     RU_PRIVATE_CLEAN;
	while (s < end && f->have != all) {
		size_t n = (size_t)(end - s);
		if (KEY("Rss:")) {
			f->rss = read_kb(&s, end);
			f->have |= RU_RSS;
		} else if (KEY("Pss:")) {
			f->pss = read_kb(&s, end);
			f->have |= RU_PSS;
		} else if (KEY("Pss_Anon:")) {
			f->pss_anon = read_kb(&s, end);
			f->have |= RU_PSS_ANON;
		} else if (KEY("Pss_Shmem:")) {
			f->pss_shmem = read_kb(&s, end);
			f->have |= RU_PSS_SHMEM;
		} else if (KEY("Private_Clean:")) {
			f->private_clean = read_kb(&s, end);
			f->have |= RU_PRIVATE_CLEAN;
		} else if (KEY("Private_Dirty:")) {
			f->private_dirty = read_kb(&s, end);
			f->have |= RU_PRIVATE_DIRTY;
		}
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		s = nl + 1;
	}
}

void linux_parse_memcg_stat(const char *buf, size_t len, bool v2, struct memcg_fields *f)
{
	/* v1 (memory.stat of a hierarchy): total_rss is anonymous memory (and swap
	 * cache), total_shmem tmpfs/shmem; v2: anon, shmem, file. */
	const char *s = buf, *end = buf + len;
	memset(f, 0, sizeof(*f));
	while (s < end) {
		size_t n = (size_t)(end - s);
		if (v2 ? KEY("anon ") : KEY("total_rss ")) {
			f->anon = read_u64(&s, end);
			f->have |= MC_ANON;
		} else if (v2 ? KEY("shmem ") : KEY("total_shmem ")) {
			f->shmem = read_u64(&s, end);
			f->have |= MC_SHMEM;
		} else if (v2 ? KEY("file_mapped ") : KEY("total_mapped_file ")) {
			f->file_mapped = read_u64(&s, end);
			f->have |= MC_FILE_MAPPED;
		}
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		s = nl + 1;
	}
}

#undef KEY

/* Words 1..n of /proc/PID/stat after the command's closing ')' (word 1 is the
 * state, field 3) into v[1..n], a non-number 0; -1 when the text is shorter. */
static int stat_words(const char *buf, size_t len, uint64_t *v, int n)
{
	const char *s = NULL, *end = buf + len;
	for (const char *q = buf; q < end; q++)
		if (*q == ')')
			s = q + 1;
	if (!s)
		return -1;
	for (int w = 1; w <= n; w++) {
		v[w] = 0;
		while (s < end && *s == ' ')
			s++;
		if (s >= end)
			return -1;
		if (*s >= '0' && *s <= '9')
			v[w] = read_u64(&s, end);
		else
			while (s < end && *s != ' ')
				s++;
	}
	return 0;
}

int linux_parse_stat_faults(const char *buf, size_t len, uint64_t *faults)
{
	uint64_t v[11];
	/* minflt (field 10) is word 8, majflt (12) word 10 */
	if (stat_words(buf, len, v, 10))
		return -1;
	*faults = v[8] + v[10];
	return 0;
}

int linux_parse_stat_majflt(const char *buf, size_t len, uint64_t *majflt)
{
	uint64_t v[12];
	/* majflt (field 12) is word 10, cmajflt (13) word 11 */
	if (stat_words(buf, len, v, 11))
		return -1;
	*majflt = v[10] + v[11];
	return 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* A hexadecimal number ending at a byte outside [0-9a-f]; -1 when none. */
static int64_t read_hex(const char **p, const char *end)
{
	const char *s = *p;
	int64_t v = 0;
	if (s >= end || hex_digit(*s) < 0)
		return -1;
	while (s < end && hex_digit(*s) >= 0) {
		if (v < (1LL << 58))
			v = v * 16 + hex_digit(*s);
		s++;
	}
	*p = s;
	return v;
}

/* Past the blanks, then past one word. */
static const char *skip_word(const char *s, const char *end)
{
	while (s < end && *s == ' ')
		s++;
	while (s < end && *s != ' ')
		s++;
	return s;
}

int linux_parse_smaps_header(const char *line, size_t len, struct smaps_header *h)
{
	const char *s = line, *end = line + len;
	memset(h, 0, sizeof(*h));
	if (read_hex(&s, end) < 0 || s >= end || *s != '-')
		return -1;
	s = skip_word(s, end); /* the range */
	while (s < end && *s == ' ')
		s++;
	if (end - s < 4)
		return -1;
	h->exec = s[2] == 'x';
	s = skip_word(s, end); /* perms */
	s = skip_word(s, end); /* offset */
	while (s < end && *s == ' ')
		s++;
	int64_t maj = read_hex(&s, end), min;
	if (maj < 0 || s >= end || *s != ':')
		return -1;
	s++;
	if ((min = read_hex(&s, end)) < 0)
		return -1;
	h->dev = ((uint64_t)(maj & 0xfff) << 8) | ((uint64_t)maj & ~0xfffULL) << 32 |
		 ((uint64_t)min & 0xff) | ((uint64_t)min & ~0xffULL) << 12;
	while (s < end && *s == ' ')
		s++;
	if (s >= end || *s < '0' || *s > '9')
		return -1;
	h->ino = read_u64(&s, end);
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s < end) {
		h->path = s;
		h->plen = (size_t)(end - s);
	}
	return 0;
}

size_t linux_parse_pidlist(const char *buf, size_t len, void (*fn)(pid_t, void *), void *arg)
{
	const char *s = buf, *end = buf + len;
	size_t count = 0;
	while (s < end) {
		if (*s < '0' || *s > '9') {
			s++;
			continue;
		}
		uint64_t v = 0;
		while (s < end && *s >= '0' && *s <= '9' && v < (1u << 30))
			v = v * 10 + (uint64_t)(*s++ - '0');
		if (v > 0 && v < (1u << 30)) {
			fn((pid_t)v, arg);
			count++;
		}
		while (s < end && *s >= '0' && *s <= '9') /* overlong: skip */
			s++;
	}
	return count;
}

int linux_parse_statm(const char *buf, size_t len, uint64_t v[3])
{
	const char *s = buf, *end = buf + len;
	for (int i = 0; i < 3; i++) {
		while (s < end && *s == ' ')
			s++;
		if (s >= end || *s < '0' || *s > '9')
			return -1;
		v[i] = read_u64(&s, end);
	}
	return 0;
}

