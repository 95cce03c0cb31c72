/* conditions.c -- page-cache states and slow runs (see conditions.h) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"
#include "../traces/trace.h"
#include "conditions.h"

#define READ_CHUNK (1 << 20)

static const char *const cache_state_names[] = { "as-is", "warm", "cold" };

int cache_state_parse(const char *s, enum cache_state *out)
{
	for (size_t i = 0; i < sizeof(cache_state_names) / sizeof(cache_state_names[0]); i++)
		if (!strcmp(s, cache_state_names[i])) {
			*out = (enum cache_state)i;
			return 0;
		}
	return -1;
}

const char *cache_state_name(enum cache_state c)
{
	return cache_state_names[c];
}

static void file_failed(struct cache_report *rep, const char *path, const char *what)
{
	if (!rep->failed++)
		warning("cannot %s '%s': %s (its page-cache state is left as it is)", what, path,
			strerror(errno));
}

/* One regular file. */
static void apply_file(enum cache_state c, const char *path, struct cache_report *rep, char *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		file_failed(rep, path, "open");
		return;
	}
	struct stat st;
	if (fstat(fd, &st) == 0) {
		rep->files++;
		rep->bytes += (uint64_t)st.st_size;
	}
	if (c == CACHE_WARM) {
		ssize_t n;
		while ((n = read(fd, buf, READ_CHUNK)) > 0 || (n < 0 && errno == EINTR))
			;
		if (n < 0)
			file_failed(rep, path, "read");
	}
#ifdef POSIX_FADV_DONTNEED
	if (c == CACHE_COLD) {
		(void)fdatasync(fd); /* dirty pages are not dropped */
		int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		if (e) {
			errno = e;
			file_failed(rep, path, "evict (posix_fadvise)");
		}
	}
#endif
	close(fd);
}

static void apply_path(enum cache_state c, const char *path, struct cache_report *rep, char *buf,
		       int depth)
{
	struct stat st;
	if (lstat(path, &st)) {
		if (errno == ENOENT && !depth)
			rep->missing++;
		else
			file_failed(rep, path, "look at");
		return;
	}
	if (S_ISREG(st.st_mode)) {
		apply_file(c, path, rep, buf);
		return;
	}
	if (!S_ISDIR(st.st_mode) || depth > 32)
		return;
	DIR *d = opendir(path);
	if (!d) {
		file_failed(rep, path, "open the directory");
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *sub = xasprintf("%s/%s", path, e->d_name);
		apply_path(c, sub, rep, buf, depth + 1);
		free(sub);
	}
	closedir(d);
}

int cache_state_apply(enum cache_state c, char *const *paths, struct cache_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	if (c == CACHE_AS_IS)
		return 0;
#ifndef POSIX_FADV_DONTNEED
	if (c == CACHE_COLD)
		return error("--cache-state cold: this platform has no posix_fadvise() to evict "
			     "files from the page cache");
#endif
	char *buf = xmalloc(READ_CHUNK);
	for (size_t i = 0; paths && paths[i]; i++)
		apply_path(c, paths[i], rep, buf, 0);
	free(buf);
	return 0;
}

void cache_state_fields(enum cache_state c, const struct cache_report *rep,
			struct trace_fields *f)
{
	trace_fields_string(f, "cache_state", cache_state_name(c));
	if (c == CACHE_AS_IS)
		return;
	trace_fields_u64(f, "cache_files", rep->files);
	trace_fields_u64(f, "cache_bytes", rep->bytes);
}

static int conditions_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

bool run_much_slower(double wall, double *others, size_t n, double *median)
{
	if (!n)
		return false;
	qsort(others, n, sizeof(*others), conditions_cmp_double);
	*median = n % 2 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2;
	return wall > 1.5 * *median && wall - *median > 1.0;
}

double memory_prime(uint64_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	if (!bytes || bytes > SIZE_MAX / 2)
		return -1;
	int64_t t0 = mono_ns();
	/* an allocation this large is mapped apart and unmapped by free() (glibc,
	 * macOS), so the pages go back to the system at once */
	volatile char *p = malloc((size_t)bytes);
	if (!p)
		return -1;
	for (size_t off = 0; off < (size_t)bytes; off += (size_t)page)
		p[off] = 1;
	free((void *)p);
	return (double)(mono_ns() - t0) / 1e9;
}
