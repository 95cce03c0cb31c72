/* psi.c -- memory-pressure wakeups: a PSI trigger on /proc/pressure/memory (platform.h) */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"

int pl_memory_pressure_open(void)
{
	static const char *const triggers[] = {
		"some 150000 1000000",
		"some 300000 2000000", /* unprivileged triggers need a 2 s multiple (6.4+) */
	};
	for (size_t i = 0; i < sizeof(triggers) / sizeof(triggers[0]); i++) {
		int fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -1;
		size_t len = strlen(triggers[i]) + 1;
		if (write(fd, triggers[i], len) == (ssize_t)len)
			return fd;
		close(fd);
	}
	return -1;
}
