/* identity.c -- pl_self_identity(): the boot and the pid namespace (platform.h) */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"

int pl_self_identity(struct pl_identity *id)
{
	memset(id, 0, sizeof(*id));
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, id->boot, sizeof(id->boot) - 1);
		close(fd);
		id->boot[n > 0 ? n : 0] = '\0';
		id->boot[strcspn(id->boot, "\n")] = '\0';
	}
	ssize_t n = readlink("/proc/self/ns/pid", id->pidns, sizeof(id->pidns) - 1);
	id->pidns[n > 0 ? n : 0] = '\0';
	return 0;
}
