/* cgroup_home.c -- where the run's memory cgroups are made (docs/platforms.md, "The run's
 * own cgroup"): cgroup v1's memory hierarchy beside the recorder; on v2, a cgroup whose
 * children get the memory controller: the root, or the recorder's own cgroup when it is
 * delegated to this user (the recorder moves into a leaf child of its own and turns memory
 * on below), or a delegated transient scope that the user's (root: the system's) systemd
 * manager makes for the recorder. Undone at the end: memory off below, the recorder back. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "meter_int.h"

/* How long the recorder waits for systemd to move it into the scope it asked
 * for (the job is queued; a slow machine takes a second or more). */
#define SCOPE_WAIT_MS 10000

/* The recorder's memory cgroup path (relative to its hierarchy's root) from
 * /proc/self/cgroup into rel: the v1 line naming the memory controller, else
 * the v2 line ("0::PATH"). Returns 1 for v2, 0 for v1, -1 when neither. */
static int own_cgroup(char *rel, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 64];
	int kind = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c = strchr(line, ':');
		char *p = c ? strchr(c + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = '\0';
		*c = '\0';
		bool v1 = false;
		for (char *tok = strtok(c + 1, ","); tok; tok = strtok(NULL, ","))
			v1 |= !strcmp(tok, "memory");
		if (v1 || (kind < 0 && !strcmp(line, "0") && !c[1])) { /* "0::PATH" */
			snprintf(rel, size, "%s", p);
			kind = v1 ? 0 : 1;
			if (v1)
				break;
		}
	}
	fclose(f);
	return kind;
}

/* The mount point of the hierarchy (v1: a cgroup mount with the memory option;
 * v2: cgroup2) whose root holds rel, into dir, with rel's path below it. */
static int mount_of(bool v2, const char *rel, char *dir, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[2 * PATH_MAX];
	int rc = -1;
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char root[PATH_MAX], mnt[PATH_MAX], opts[512], fstype[32], super[512];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s %511s", root, mnt, opts) != 3 ||
		    sscanf(dash + 3, "%31s %*s %511s", fstype, super) != 2)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") : strcmp(fstype, "cgroup"))
			continue;
		if (!v2 && !strstr(super, "memory"))
			continue;
		if (!strncmp(opts, "ro", 2) && (!opts[2] || opts[2] == ','))
			continue; /* read-only (a container's): nothing can be made there */
		size_t rl = strcmp(root, "/") ? strlen(root) : 0;
		if (rl && (strncmp(rel, root, rl) || (rel[rl] && rel[rl] != '/')))
			continue;
		size_t ml = strlen(mnt), tl = strlen(rel + rl);
		if (ml + tl + 1 > size)
			continue;
		memcpy(dir, mnt, ml);
		memcpy(dir + ml, rel + rl, tl + 1);
		rc = 0;
	}
	fclose(f);
	return rc;
}

int memcg_open_in(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, flags | O_CLOEXEC);
}

/* The first size-1 bytes of dir/name, NUL-terminated: their length, or -1. */
static ssize_t read_in(const char *dir, const char *name, char *buf, size_t size)
{
	int fd = memcg_open_in(dir, name, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* text written to dir/name in one write: 0 or -1. */
int memcg_write_in(const char *dir, const char *name, const char *text)
{
	int fd = memcg_open_in(dir, name, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Whether word is one of the space-separated words of dir/name. */
static bool lists(const char *dir, const char *name, const char *word)
{
	char buf[512];
	if (read_in(dir, name, buf, sizeof(buf)) < 0)
		return false;
	size_t wl = strlen(word);
	for (char *s = buf; (s = strstr(s, word)); s += wl)
		if ((s == buf || s[-1] == ' ') && (!s[wl] || s[wl] == ' ' || s[wl] == '\n'))
			return true;
	return false;
}

int memcg_move_all(const char *from, const char *to)
{
	char buf[4096];
	int moved = 0;
	if (read_in(from, "cgroup.procs", buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		moved += !memcg_write_in(to, "cgroup.procs", l);
	return moved;
}

/* Whether every process in dir is the recorder or a child of it: the only
 * ones it may move. */
static bool holds_only_ours(const char *dir)
{
	char buf[4096];
	ssize_t n = read_in(dir, "cgroup.procs", buf, sizeof(buf));
	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		return false;
	pid_t self = getpid();
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		struct pl_proc p;
		pid_t pid = (pid_t)atol(l);
		if (pid != self && (pl_proc_read(pid, &p) || p.ppid != self))
			return false;
	}
	return true;
}

/* A name no other recorder has, whatever its PID namespace: the pid, the
 * namespace's inode and a count. */
void memcg_unique(char *out, size_t size, const char *what, unsigned seq)
{
	struct stat st;
	unsigned long ns = stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long)st.st_ino;
	snprintf(out, size, "stagebench-%s%d-%lx-%u", what, (int)getpid(), ns, seq);
}

/* A directory made under parent with a fresh unique name (what: its kind),
 * locked (flock) for as long as *lock_fd stays open: 0, or -1. */
int memcg_make_locked(const char *parent, const char *what, char *dir, size_t size,
		      int *lock_fd)
{
	static unsigned seq;
	for (int tries = 0; tries < 64; tries++) {
		char name[128];
		memcg_unique(name, sizeof(name), what, seq++);
		int n = snprintf(dir, size, "%s/%s", parent, name);
		if (n < 0 || (size_t)n >= size)
			break;
		if (mkdir(dir, 0755)) {
			if (errno == EEXIST)
				continue; /* a killed recorder's: its name is not ours to take */
			break;
		}
		*lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*lock_fd >= 0 && !flock(*lock_fd, LOCK_EX | LOCK_NB))
			return 0;
		if (*lock_fd >= 0)
			close(*lock_fd);
		*lock_fd = -1;
		rmdir(dir);
		break;
	}
	dir[0] = '\0';
	return -1;
}

/* v2: the recorder (and its children) into a leaf of its own under dir, and
 * memory passed down from dir: the kernel lets a cgroup other than the root
 * pass a controller down only while it holds no process. */
static int delegate(struct memcg *cg, const char *dir)
{
	char ctl[PATH_MAX + 32];
	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", dir);
	if (!lists(dir, "cgroup.controllers", "memory") || access(dir, W_OK) ||
	    access(ctl, W_OK) || !holds_only_ours(dir))
		return -1;
	if (memcg_make_locked(dir, "recorder-", cg->leaf, sizeof(cg->leaf), &cg->leaf_fd))
		return -1;
	memcg_move_all(dir, cg->leaf);
	if (memcg_write_in(dir, "cgroup.subtree_control", "+memory")) {
		memcg_move_all(cg->leaf, dir);
		memcg_home_release(cg);
		return -1;
	}
	cg->enabled = true;
	return 0;
}

/* The slice a scope should join so that the recorder leaves no limit behind:
 * the one above its cgroup (rel's last component cut), when it is one. */
static void slice_of(const char *rel, char *out, size_t size)
{
	out[0] = '\0';
	const char *e = strrchr(rel, '/');
	if (!e || e == rel)
		return;
	const char *b = e - 1;
	while (b > rel && b[-1] != '/')
		b--;
	size_t n = (size_t)(e - b);
	if (n > 6 && n < size && !strncmp(e - 6, ".slice", 6)) {
		memcpy(out, b, n);
		out[n] = '\0';
	}
}

/* The descriptor a scope's request hands to busctl, which passes it on. */
#define PIDFD_ARG 3

/* A pidfd of the recorder (Linux 5.3+), or -1. */
static int own_pidfd(void)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, getpid(), 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* busctl (systemd's, on every machine it runs) asks the manager for a
 * transient scope holding the recorder, delegated (Delegate=yes: what
 * `systemd-run --scope -p Delegate=yes` asks for its own process). The
 * recorder is named by a pidfd (PIDFDs, newer systemd) where pidfd >= 0: the
 * manager then finds it whatever PID namespace the recorder is in (pid 1 of
 * a container's is the manager itself to the manager); else by its pid. */
static int ask_scope(const char *name, const char *slice, int pidfd)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", pidfd >= 0 ? PIDFD_ARG : (int)getpid());
	const char *argv[32];
	int a = 0;
	argv[a++] = "busctl";
	if (getuid() != 0)
		argv[a++] = "--user";
	const char *rest[] = { "--timeout=10", "call", "org.freedesktop.systemd1",
			       "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
			       "StartTransientUnit", "ssa(sv)a(sa(sv))", name, "fail",
			       slice[0] ? "4" : "3", pidfd >= 0 ? "PIDFDs" : "PIDs",
			       pidfd >= 0 ? "ah" : "au", "1", pid, "Delegate", "b",
			       "true", "Description", "s", "stagebench recorder", NULL };
	for (int i = 0; rest[i]; i++)
		argv[a++] = rest[i];
	if (slice[0]) {
		argv[a++] = "Slice";
		argv[a++] = "s";
		argv[a++] = slice;
	}
	argv[a++] = "0";
	argv[a] = NULL;
	pid_t c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		/* the pidfd as PIDFD_ARG, kept across the exec */
		if (pidfd >= 0 && (pidfd == PIDFD_ARG ? fcntl(pidfd, F_SETFD, 0)
						       : dup2(pidfd, PIDFD_ARG)) < 0)
			_exit(127);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp("busctl", (char *const *)argv);
		_exit(127);
	}
	int status;
	while (waitpid(c, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Whether leaving dir for a scope of our own would leave a memory limit
 * behind (memory.max or memory.high set on it), or a Slurm step (its
 * accounting is its cgroup's). */
static bool bound_here(const char *dir)
{
	char buf[64];
	if (getenv("SLURM_JOB_ID") || getenv("SLURM_STEP_ID"))
		return true;
	if (read_in(dir, "memory.max", buf, sizeof(buf)) > 0 && strncmp(buf, "max", 3))
		return true;
	return read_in(dir, "memory.high", buf, sizeof(buf)) > 0 && strncmp(buf, "max", 3);
}

/* A delegated transient scope for the recorder from systemd: 0 once the
 * recorder is in it (its path in rel), else -1. */
static int scope(const char *dir, char *rel, size_t size)
{
	char name[160], slice[256];
	if (bound_here(dir))
		return -1;
	memcg_unique(name, sizeof(name) - 8, "", 0);
	strcat(name, ".scope");
	slice_of(rel, slice, sizeof(slice));
	if (getuid() != 0)
		slice[0] = '\0'; /* the user's manager: its own app.slice */
	/* by pidfd, else (an older kernel, systemd or busctl) by pid */
	int pidfd = own_pidfd();
	int asked = ask_scope(name, slice, pidfd);
	if (pidfd >= 0) {
		close(pidfd);
		if (asked)
			asked = ask_scope(name, slice, -1);
	}
	if (asked)
		return -1;
	size_t nl = strlen(name);
	for (int ms = 0; ms < SCOPE_WAIT_MS; ms += 10) {
		size_t rl;
		if (own_cgroup(rel, size) == 1 && (rl = strlen(rel)) > nl &&
		    !strcmp(rel + rl - nl, name) && rel[rl - nl - 1] == '/')
			return 0;
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* v2: a cgroup whose children get memory into cg->parent, in the order of
 * docs/platforms.md. STAGEBENCH_SCOPE=0 asks no manager. */
static int v2_home(struct memcg *cg, char *rel, size_t size)
{
	char dir[PATH_MAX];
	if (mount_of(true, rel, dir, sizeof(dir)))
		return -1;
	if (lists(dir, "cgroup.subtree_control", "memory") && !access(dir, W_OK)) {
		snprintf(cg->parent, sizeof(cg->parent), "%s", dir);
		cg->how = "the recorder's own cgroup, which passes memory down";
		return 0;
	}
	if (!delegate(cg, dir)) {
		snprintf(cg->parent, sizeof(cg->parent), "%s", dir);
		cg->how = "the recorder's own cgroup, delegated to this user";
		return 0;
	}
	const char *e = getenv("STAGEBENCH_SCOPE");
	if ((e && !strcmp(e, "0")) || scope(dir, rel, size) ||
	    mount_of(true, rel, dir, sizeof(dir)) || delegate(cg, dir))
		return -1;
	snprintf(cg->parent, sizeof(cg->parent), "%s", dir);
	cg->how = "a delegated scope systemd made for the recorder";
	return 0;
}

int memcg_home(struct memcg *cg)
{
	char rel[PATH_MAX];
	if (cg->parent[0])
		return 0;
	int kind = own_cgroup(rel, sizeof(rel));
	if (kind < 0)
		return -1;
	cg->v2 = kind == 1;
	if (kind == 0) {
		cg->how = "the recorder's own memory cgroup (v1)";
		return mount_of(false, rel, cg->parent, sizeof(cg->parent));
	}
	if (!v2_home(cg, rel, sizeof(rel)))
		return 0;
	cg->parent[0] = '\0';
	return -1;
}

/* Memory off below the recorder's own cgroup and the recorder (and what is in
 * its leaf: its own children) back in it, where delegate() changed them. */
void memcg_home_release(struct memcg *cg)
{
	if (cg->leaf[0]) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", cg->leaf);
		*strrchr(dir, '/') = '\0';
		if (cg->enabled)
			memcg_write_in(dir, "cgroup.subtree_control", "-memory");
		memcg_move_all(cg->leaf, dir);
		rmdir(cg->leaf);
		cg->leaf[0] = '\0';
	}
	if (cg->leaf_fd >= 0)
		close(cg->leaf_fd);
	cg->leaf_fd = -1;
	cg->enabled = false;
	cg->parent[0] = '\0';
}
