/*
 * pairbench: slogqual's pair engine. The loop of FreeBSD diskinfo's slogbench(), timing the pair.
 *
 * For RUNTIME (or until MAX_BYTES have been written, when given and not 0), at queue depth 1: write SIZE bytes at a random SIZE-aligned offset inside the first
 * REGION bytes of TARGET (O_DIRECT when asked), then flush the device cache (Linux: fdatasync; FreeBSD:
 * ioctl(DIOCGFLUSH) on a disk, fsync on a file). Both are timed with CLOCK_MONOTONIC, so every IO gives
 * a write time and a flush time, and their sum is the pair's latency exactly.
 *
 *   pairbench --version
 *   pairbench TARGET SIZE REGION RUNTIME_MS DIRECT(0|1) SAMPLES_FILE [MAX_BYTES]
 *
 * One write(2) call per IO, whatever the size (diskinfo's habit): above the device's largest transfer
 * (MAXPHYS on FreeBSD, max_sectors_kb on Linux) the kernel splits it, as it does for a ZIL block.
 *
 * SAMPLES_FILE: the 8 bytes "SQPAIR2\n", then per IO three little-endian uint64: the IO's start (ns
 * since the run started), write ns, flush ns. The start times give latency over time (a consumer
 * SSD's SLC cache running out shows as a step at some point of a long run).
 * stdout: one summary line "pairbench 2 ios=N elapsed_ns=T bytes=B flush=KIND".
 * Errors: one line on stderr, exit 1 (an IO failed) or 2 (bad arguments).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#ifdef __FreeBSD__
#include <sys/disk.h>
#include <sys/ioctl.h>
#endif

#define PAIRBENCH_VERSION 2
#define MAGIC "SQPAIR2\n"
#define CHUNK 4096 /* samples buffered before a write to SAMPLES_FILE */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_state;
static uint64_t next_random(void) /* xorshift64*: offsets need spread, not cryptography */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static void put_le64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("pairbench %d\n", PAIRBENCH_VERSION);
		return 0;
	}
	uint64_t size, region, runtime_ms, direct, max_bytes = 0;
	if ((argc != 7 && argc != 8) || parse_u64(argv[2], &size) || parse_u64(argv[3], &region) ||
	    parse_u64(argv[4], &runtime_ms) || parse_u64(argv[5], &direct) ||
	    (argc == 8 && parse_u64(argv[7], &max_bytes)) || size == 0 || size % 512 ||
	    region < size || runtime_ms == 0 || direct > 1) {
		fprintf(stderr, "usage: pairbench TARGET SIZE REGION RUNTIME_MS DIRECT(0|1) SAMPLES_FILE [MAX_BYTES] "
				"(SIZE a multiple of 512, REGION >= SIZE)\n");
		return 2;
	}
	const char *target = argv[1], *samples = argv[6];
	int flags = O_WRONLY;
#ifdef O_DIRECT
	if (direct)
		flags |= O_DIRECT;
#else
	if (direct) {
		fprintf(stderr, "pairbench: O_DIRECT is not available on this system\n");
		return 2;
	}
#endif
	int fd = open(target, flags); /* never O_CREAT: a mistyped path is an error, not a new file */
	if (fd < 0) {
		fprintf(stderr, "pairbench: cannot open %s: %s\n", target, strerror(errno));
		return 1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "pairbench: cannot stat %s: %s\n", target, strerror(errno));
		return 1;
	}
#ifdef __FreeBSD__
	int disk = S_ISCHR(st.st_mode); /* FreeBSD disks are character devices */
	const char *flush_kind = disk ? "DIOCGFLUSH" : "fsync";
#else
	const char *flush_kind = "fdatasync";
#endif
	int out = open(samples, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		fprintf(stderr, "pairbench: cannot create %s: %s\n", samples, strerror(errno));
		return 1;
	}
	void *buf;
	size_t align = 4096;
	if (posix_memalign(&buf, align, (size_t)size)) {
		fprintf(stderr, "pairbench: cannot allocate %" PRIu64 " bytes\n", size);
		return 1;
	}
	rng_state = now_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9E3779B97F4A7C15ull;
	if (rng_state == 0)
		rng_state = 1;
	for (uint64_t i = 0; i < size; i += 8) { /* incompressible data, as diskinfo's random fill */
		uint64_t r = next_random();
		memcpy((char *)buf + i, &r, size - i < 8 ? size - i : 8);
	}
	static unsigned char chunk[CHUNK * 24];
	size_t fill = 0;
	if (write_all(out, (const unsigned char *)MAGIC, 8) < 0)
		goto samples_failed;

	uint64_t slots = region / size, ios = 0;
	uint64_t start = now_ns(), deadline = start + runtime_ms * 1000000u, t0, t1, t2 = start;
	do {
		off_t offset = (off_t)((next_random() % slots) * size);
		t0 = now_ns();
		ssize_t w = pwrite(fd, buf, (size_t)size, offset);
		t1 = now_ns();
		if (w != (ssize_t)size) {
			fprintf(stderr, "pairbench: write of %" PRIu64 " bytes at %jd on %s failed: %s\n", size,
				(intmax_t)offset, target, w < 0 ? strerror(errno) : "short write");
			return 1;
		}
#ifdef __FreeBSD__
		int rc = disk ? ioctl(fd, DIOCGFLUSH) : fsync(fd);
#else
		int rc = fdatasync(fd);
#endif
		t2 = now_ns();
		if (rc < 0) {
			fprintf(stderr, "pairbench: %s on %s failed: %s\n", flush_kind, target, strerror(errno));
			return 1;
		}
		put_le64(chunk + fill * 24, t0 - start);
		put_le64(chunk + fill * 24 + 8, t1 - t0);
		put_le64(chunk + fill * 24 + 16, t2 - t1);
		ios++;
		if (++fill == CHUNK) {
			if (write_all(out, chunk, sizeof(chunk)) < 0)
				goto samples_failed;
			fill = 0;
		}
	} while (t2 < deadline && (max_bytes == 0 || ios * size < max_bytes));
	if (write_all(out, chunk, fill * 24) < 0 || close(out) < 0)
		goto samples_failed;
	close(fd);
	printf("pairbench %d ios=%" PRIu64 " elapsed_ns=%" PRIu64 " bytes=%" PRIu64 " flush=%s\n",
	       PAIRBENCH_VERSION, ios, t2 - start, ios * size, flush_kind);
	return 0;
samples_failed:
	fprintf(stderr, "pairbench: cannot write the samples to %s: %s\n", samples, strerror(errno));
	return 1;
}
