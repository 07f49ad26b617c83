/*
 * pairbench: slogqual's pair engine. The loop of FreeBSD diskinfo's slogbench(), timing the pair, and the
 * summaries of what it timed, so that no per-IO work is left to Python.
 *
 * For RUNTIME (or until MAX_BYTES have been written, when given and not 0), at queue depth 1: write SIZE bytes at a random SIZE-aligned offset inside the first
 * REGION bytes of TARGET (O_DIRECT when asked), then flush the device cache (Linux: fdatasync; FreeBSD:
 * ioctl(DIOCGFLUSH) on a disk, fsync on a file). Both are timed with CLOCK_MONOTONIC, so every IO gives
 * a write time and a flush time, and their sum is the pair's latency exactly.
 *
 *   pairbench --version
 *   pairbench [OPTIONS] [--] TARGET SIZE REGION RUNTIME_MS DIRECT(0|1)
 *     --samples FILE      also write every IO's raw sample to FILE (the format below)
 *     --max-bytes N       stop once N bytes are written (0: RUNTIME_MS only)
 *     --interval-ns N     latency over time: the width of one interval (default 100 ms)
 *     --precision REL     after RUNTIME_MS, go on until the batch-means 95 % interval of the pair mean is
 *                         within +-REL of it (0.02: 2 %), for at most --max-runtime-ms in all
 *     --max-runtime-ms N  (default RUNTIME_MS)
 *   pairbench --summarize [--interval-ns N] [--elapsed-ns N] [--] SAMPLES_FILE
 *     the summaries of a samples file, as a run prints them (tests: the same figures as Python's)
 *
 * One write(2) call per IO, whatever the size (diskinfo's habit): above the device's largest transfer
 * (MAXPHYS on FreeBSD, max_sectors_kb on Linux) the kernel splits it, as it does for a ZIL block.
 *
 * --precision repeats slogqual.analysis.precision's rule (batch means, 30 batches, t = 2.045; more_time
 * * 1.1, at least 0.1 s, stop when under 0.05 s is left) in one process: each check is a "round". The
 * time a check takes is left out of the timeline, as the gap between two engine runs was before.
 *
 * SAMPLES_FILE: the 8 bytes "SQPAIR2\n", then per IO three little-endian uint64: the IO's start (ns
 * since the run started), write ns, flush ns.
 *
 * stdout, one record a line, words "key=value", integers in ns (all exact):
 *   pairbench 3 ios=N elapsed_ns=T bytes=B flush=KIND rounds=R
 *   batches per=P sums=S1,...,S30        (the pair's 30 batch sums; the first n - 30P IOs are left out)
 *   overtime interval_ns=STEP end_ns=E count=C
 *   bucket ios=N sum=S p99=P max=M       (C lines, in time order; ios=0 sum=0 p99=- max=- when empty)
 *   series NAME n= sum= sumsq= min= max= p50= p90= p99= p999= p9999=    (NAME: pair, write, flush)
 *   end
 * (sumsq: the exact sum of squares, up to 128 bits, in decimal.)
 * Percentiles are nearest rank as slogqual.analysis.percentiles defines it: of n sorted samples the
 * q-th is x[k], k = max(1, ceil(q * n / 100)) with q resolved to 1/10000 of a percent, in integers.
 * An IO belongs to the interval its start falls in (the last one keeps any past the end).
 * Errors: one line on stderr, exit 1 (an IO or the samples file failed) or 2 (bad arguments).
 *
 * It dies with the process that started it, even one killed by SIGKILL (Linux PR_SET_PDEATHSIG, FreeBSD
 * PROC_PDEATHSIG_CTL): a killed slogqual has released its device lock, and nothing may go on writing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
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
#include <sys/procctl.h>
#endif
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define PAIRBENCH_VERSION 3
#define MAGIC "SQPAIR2\n"
#define CHUNK 4096 /* samples buffered before a write to SAMPLES_FILE */
#define BATCHES 30 /* slogqual.analysis.precision.BATCHES */
#define MIN_PER_BATCH 2
#define T975_29 2.045 /* Student's t, 0.975, 29 degrees of freedom */

/* slogqual.analysis.percentiles.REPORTED, q in 1/10000 of a percent */
static const char *const PCT_NAME[] = {"p50", "p90", "p99", "p999", "p9999"};
static const uint64_t PCT_Q[] = {500000, 900000, 990000, 999000, 999900};
#define NPCT 5
#define Q99 990000

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

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
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

/* --- the samples kept in memory: write and flush ns per IO, and where each interval starts ---------- */

struct u64s {
	uint64_t *v;
	size_t n, cap;
};

static int push(struct u64s *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 65536;
		uint64_t *v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

struct run {
	struct u64s write, flush;
	struct u64s cuts; /* cuts.v[b - 1]: the first IO that started at or after b intervals */
	uint64_t step, next_edge;
};

/* Record one IO that started start_ns into the run; -1 when memory runs out. */
static int record(struct run *r, uint64_t start_ns, uint64_t write_ns, uint64_t flush_ns)
{
	while (start_ns >= r->next_edge) {
		if (push(&r->cuts, r->write.n) < 0)
			return -1;
		r->next_edge += r->step;
	}
	return push(&r->write, write_ns) < 0 || push(&r->flush, flush_ns) < 0 ? -1 : 0;
}

/* --- figures -------------------------------------------------------------------------------------- */

static uint64_t rank(uint64_t q, uint64_t n) /* 1-based nearest rank: max(1, ceil(q * n / 1000000)) */
{
	uint64_t k = (q * n + 999999) / 1000000;
	return k ? k : 1;
}

static void swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;
	*a = *b;
	*b = t;
}

/* Reorder a[lo..hi) so that a[k] is its (k - lo)-th smallest, none after it smaller, none before it
 * larger: quickselect, random pivot, three-way partition (many equal samples cost nothing). */
static void select_k(uint64_t *a, size_t lo, size_t hi, size_t k)
{
	while (hi - lo > 1) {
		uint64_t pivot = a[lo + next_random() % (hi - lo)];
		size_t lt = lo, i = lo, gt = hi;
		while (i < gt) {
			if (a[i] < pivot)
				swap(&a[lt++], &a[i++]);
			else if (a[i] > pivot)
				swap(&a[i], &a[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return;
	}
}

struct series {
	uint64_t n, sum, min, max, sq_hi, sq_lo, pct[NPCT];
};

static void add_square(struct series *s, uint64_t x) /* sq += x * x, in 128 bits */
{
	uint64_t xl = x & 0xffffffffu, xh = x >> 32;
	uint64_t ll = xl * xl, mid = xl * xh, hh = xh * xh;
	uint64_t lo = ll + (mid << 33), hi = hh + (mid >> 31) + (lo < ll);
	s->sq_lo += lo;
	s->sq_hi += hi + (s->sq_lo < lo);
}

/* The figures of a[0..n), n >= 1; reorders a. */
static void summarize(uint64_t *a, size_t n, struct series *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->min = s->max = a[0];
	for (size_t i = 0; i < n; i++) {
		s->sum += a[i];
		add_square(s, a[i]);
		if (a[i] < s->min)
			s->min = a[i];
		if (a[i] > s->max)
			s->max = a[i];
	}
	size_t lo = 0;
	for (int j = 0; j < NPCT; j++) { /* ascending ranks: each search starts where the last one ended */
		size_t k = (size_t)rank(PCT_Q[j], n) - 1;
		select_k(a, lo, n, k);
		s->pct[j] = a[k];
		lo = k;
	}
}

static void print_u128(uint64_t hi, uint64_t lo)
{
	uint32_t limb[4] = {(uint32_t)(hi >> 32), (uint32_t)hi, (uint32_t)(lo >> 32), (uint32_t)lo};
	char digits[40];
	int len = 0;
	do {
		uint64_t rem = 0;
		for (int i = 0; i < 4; i++) {
			uint64_t cur = rem << 32 | limb[i];
			limb[i] = (uint32_t)(cur / 10);
			rem = cur % 10;
		}
		digits[len++] = (char)('0' + rem);
	} while (limb[0] | limb[1] | limb[2] | limb[3]);
	while (len > 0)
		putchar(digits[--len]);
}

static void print_series(const char *name, const struct series *s)
{
	printf("series %s n=%" PRIu64 " sum=%" PRIu64 " sumsq=", name, s->n, s->sum);
	print_u128(s->sq_hi, s->sq_lo);
	printf(" min=%" PRIu64 " max=%" PRIu64, s->min, s->max);
	for (int j = 0; j < NPCT; j++)
		printf(" %s=%" PRIu64, PCT_NAME[j], s->pct[j]);
	putchar('\n');
}

/* The pair's batch sums (slogqual.analysis.precision.mean_interval): 30 batches of n / 30 consecutive
 * IOs, the first n % 30 left out. */
static size_t batch_sums(const struct run *r, uint64_t sums[BATCHES])
{
	size_t n = r->write.n, per = n / BATCHES, skip = n - per * BATCHES;
	for (int b = 0; b < BATCHES; b++) {
		sums[b] = 0;
		for (size_t i = skip + b * per; i < skip + (b + 1) * per; i++)
			sums[b] += r->write.v[i] + r->flush.v[i];
	}
	return per;
}

/* How much longer to run, in ns, for the pair mean's interval to be within precision (0: enough):
 * slogqual.analysis.precision.more_time * 1.1, at least 0.1 s, at most what max_ns leaves; under
 * 0.05 s left is 0. Compared squared, so no libm. */
static uint64_t more_ns(const struct run *r, double precision, uint64_t elapsed, uint64_t max_ns)
{
	uint64_t sums[BATCHES];
	size_t per = batch_sums(r, sums);
	double more = (double)elapsed; /* without an interval yet: as long again */
	if (per >= MIN_PER_BATCH) {
		double means[BATCHES], grand = 0, var = 0, total = 0;
		for (int b = 0; b < BATCHES; b++) {
			means[b] = (double)sums[b] / per;
			grand += means[b];
		}
		grand /= BATCHES;
		for (int b = 0; b < BATCHES; b++)
			var += (means[b] - grand) * (means[b] - grand);
		var /= BATCHES - 1;
		for (size_t i = 0; i < r->write.n; i++)
			total += (double)(r->write.v[i] + r->flush.v[i]);
		double mean = total / r->write.n;
		if (mean > 0) {
			double rel2 = T975_29 * T975_29 * var / BATCHES / (mean * mean); /* (half-width / mean)^2 */
			if (rel2 <= precision * precision)
				return 0;
			more = elapsed * (rel2 / (precision * precision) - 1);
		}
	}
	more *= 1.1;
	if (more < 1e8)
		more = 1e8;
	if (more > (double)max_ns - (double)elapsed)
		more = (double)max_ns - (double)elapsed;
	return more < 5e7 ? 0 : (uint64_t)more;
}

/* Everything after the header line: the batches, the intervals, the three series. Frees the run. */
static int print_summaries(struct run *r, uint64_t end)
{
	size_t n = r->write.n;
	uint64_t *pair = malloc(n * sizeof(*pair)), sums[BATCHES];
	if (!pair)
		return -1;
	for (size_t i = 0; i < n; i++)
		pair[i] = r->write.v[i] + r->flush.v[i];
	size_t per = batch_sums(r, sums);

	uint64_t step = r->step, count = end / step + (end % step != 0);
	if (count == 0)
		count = 1;
	size_t widest = 0; /* the most IOs in one interval: the scratch for its p99 */
	for (uint64_t b = 0; b < count; b++) {
		size_t lo = b == 0 ? 0 : b - 1 < r->cuts.n ? r->cuts.v[b - 1] : n;
		size_t hi = b == count - 1 ? n : b < r->cuts.n ? r->cuts.v[b] : n;
		if (hi - lo > widest)
			widest = hi - lo;
	}
	uint64_t *scratch = malloc((widest ? widest : 1) * sizeof(*scratch));
	if (!scratch) {
		free(pair);
		return -1;
	}
	printf("batches per=%zu sums=", per);
	for (int b = 0; b < BATCHES; b++)
		printf(b ? ",%" PRIu64 : "%" PRIu64, sums[b]);
	printf("\novertime interval_ns=%" PRIu64 " end_ns=%" PRIu64 " count=%" PRIu64 "\n", step, end, count);
	for (uint64_t b = 0; b < count; b++) {
		size_t lo = b == 0 ? 0 : b - 1 < r->cuts.n ? r->cuts.v[b - 1] : n;
		size_t hi = b == count - 1 ? n : b < r->cuts.n ? r->cuts.v[b] : n;
		if (hi == lo) {
			printf("bucket ios=0 sum=0 p99=- max=-\n");
			continue;
		}
		uint64_t sum = 0, max = 0;
		for (size_t i = lo; i < hi; i++) {
			scratch[i - lo] = pair[i];
			sum += pair[i];
			if (pair[i] > max)
				max = pair[i];
		}
		size_t k = (size_t)rank(Q99, hi - lo) - 1;
		select_k(scratch, 0, hi - lo, k);
		printf("bucket ios=%zu sum=%" PRIu64 " p99=%" PRIu64 " max=%" PRIu64 "\n", hi - lo, sum, scratch[k], max);
	}
	free(scratch);
	free(r->cuts.v);
	struct series s;
	summarize(pair, n, &s);
	print_series("pair", &s);
	free(pair);
	summarize(r->write.v, n, &s);
	print_series("write", &s);
	free(r->write.v);
	summarize(r->flush.v, n, &s);
	print_series("flush", &s);
	free(r->flush.v);
	printf("end\n");
	return fflush(stdout) == 0 ? 0 : -1;
}

/* --- the command line ----------------------------------------------------------------------------- */

struct options {
	const char *samples;
	uint64_t max_bytes, interval_ns, max_runtime_ms, elapsed_ns;
	double precision;
	int has_elapsed;
};

/* Parse leading "--name value" pairs up to "--"; the index of the first other argument, or -1. */
static int parse_options(int argc, char **argv, int i, struct options *o)
{
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (strcmp(argv[i], "--") == 0) /* the end of the options: a TARGET may start with -- */
			return i + 1;
		if (i + 1 >= argc)
			return -1;
		const char *name = argv[i], *value = argv[i + 1];
		if (strcmp(name, "--samples") == 0)
			o->samples = value;
		else if (strcmp(name, "--max-bytes") == 0) {
			if (parse_u64(value, &o->max_bytes))
				return -1;
		} else if (strcmp(name, "--interval-ns") == 0) {
			if (parse_u64(value, &o->interval_ns) || o->interval_ns == 0)
				return -1;
		} else if (strcmp(name, "--max-runtime-ms") == 0) {
			if (parse_u64(value, &o->max_runtime_ms))
				return -1;
		} else if (strcmp(name, "--elapsed-ns") == 0) {
			if (parse_u64(value, &o->elapsed_ns))
				return -1;
			o->has_elapsed = 1;
		} else if (strcmp(name, "--precision") == 0) {
			char *end;
			errno = 0;
			o->precision = strtod(value, &end);
			if (errno || end == value || *end || !(o->precision > 0 && o->precision < 1))
				return -1;
		} else
			return -1;
	}
	return i;
}

static int out_of_memory(size_t ios)
{
	fprintf(stderr, "pairbench: out of memory for the samples after %zu IOs\n", ios);
	return 1;
}

/* pairbench --summarize [--interval-ns N] [--elapsed-ns N] SAMPLES_FILE */
static int summarize_file(int argc, char **argv)
{
	struct options o = {.interval_ns = 100000000u};
	int i = parse_options(argc, argv, 2, &o);
	if (i < 0 || i != argc - 1 || o.samples || o.max_bytes || o.max_runtime_ms || o.precision) {
		fprintf(stderr, "usage: pairbench --summarize [--interval-ns N] [--elapsed-ns N] [--] SAMPLES_FILE\n");
		return 2;
	}
	const char *path = argv[i];
	FILE *in = fopen(path, "rb");
	if (!in) {
		fprintf(stderr, "pairbench: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	static unsigned char chunk[CHUNK * 24];
	struct run r = {.step = o.interval_ns, .next_edge = o.interval_ns};
	uint64_t last_start = 0, end = 0;
	size_t got = fread(chunk, 1, 8, in);
	if (got != 8 || memcmp(chunk, MAGIC, 8) != 0) {
		fprintf(stderr, "pairbench: %s is not a samples file (no SQPAIR2 header)\n", path);
		return 1;
	}
	while ((got = fread(chunk, 1, sizeof(chunk), in)) > 0) {
		if (got % 24) { /* a short read inside the file is an error; at its end, a partial record */
			fprintf(stderr, "pairbench: %s does not hold whole (start, write, flush) records\n", path);
			return 1;
		}
		for (size_t j = 0; j < got; j += 24) {
			uint64_t start = get_le64(chunk + j), w = get_le64(chunk + j + 8), f = get_le64(chunk + j + 16);
			if (start < last_start) {
				fprintf(stderr, "pairbench: %s: the start times do not ascend (IO %zu)\n", path, r.write.n);
				return 1;
			}
			last_start = start;
			if (start + w + f > end)
				end = start + w + f;
			if (record(&r, start, w, f) < 0)
				return out_of_memory(r.write.n);
		}
	}
	if (ferror(in)) {
		fprintf(stderr, "pairbench: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	fclose(in);
	if (r.write.n == 0) {
		fprintf(stderr, "pairbench: %s holds no samples\n", path);
		return 1;
	}
	if (o.has_elapsed)
		end = o.elapsed_ns;
	rng_state = 0x9E3779B97F4A7C15ull;
	printf("pairbench %d ios=%zu elapsed_ns=%" PRIu64 " bytes=0 flush=none rounds=0\n", PAIRBENCH_VERSION,
	       r.write.n, end);
	return print_summaries(&r, end) < 0 ? out_of_memory(r.write.n) : 0;
}

/* SIGKILL when the parent dies. slogqual asks for the same in the child before exec (tools/spawn.py); this
 * covers any other launcher. The parent may die just before the request, which then never fires: a
 * parent changed since the start means it is gone already. */
static void die_with_parent(void)
{
	pid_t parent = getppid();
#if defined(__linux__)
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#elif defined(__FreeBSD__)
	int sig = SIGKILL;
	procctl(P_PID, 0, PROC_PDEATHSIG_CTL, &sig);
#endif
	if (getppid() != parent)
		raise(SIGKILL);
}

int main(int argc, char **argv)
{
	die_with_parent();
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("pairbench %d\n", PAIRBENCH_VERSION);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--summarize") == 0)
		return summarize_file(argc, argv);
	struct options o = {.interval_ns = 100000000u};
	int i = parse_options(argc, argv, 1, &o);
	uint64_t size, region, runtime_ms, direct;
	if (i < 0 || argc - i != 5 || parse_u64(argv[i + 1], &size) || parse_u64(argv[i + 2], &region) ||
	    parse_u64(argv[i + 3], &runtime_ms) || parse_u64(argv[i + 4], &direct) || size == 0 || size % 512 ||
	    region < size || runtime_ms == 0 || direct > 1 || (o.max_runtime_ms && o.max_runtime_ms < runtime_ms)) {
		fprintf(stderr, "usage: pairbench [--samples FILE] [--max-bytes N] [--interval-ns N] [--precision REL "
				"[--max-runtime-ms N]] [--] TARGET SIZE REGION RUNTIME_MS DIRECT(0|1) "
				"(SIZE a multiple of 512, REGION >= SIZE)\n");
		return 2;
	}
	const char *target = argv[i], *samples = o.samples;
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
	int out = -1;
	if (samples && (out = open(samples, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
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
	for (uint64_t j = 0; j < size; j += 8) { /* incompressible data, as diskinfo's random fill */
		uint64_t r = next_random();
		memcpy((char *)buf + j, &r, size - j < 8 ? size - j : 8);
	}
	static unsigned char chunk[CHUNK * 24];
	size_t fill = 0;
	if (out >= 0 && write_all(out, (const unsigned char *)MAGIC, 8) < 0)
		goto samples_failed;

	struct run run = {.step = o.interval_ns, .next_edge = o.interval_ns};
	uint64_t max_ns = (o.max_runtime_ms ? o.max_runtime_ms : runtime_ms) * 1000000u;
	uint64_t slots = region / size, ios = 0, rounds = 1;
	/* origin: time 0 of the timeline; it moves on by the time each precision check takes */
	uint64_t origin = now_ns(), deadline = origin + runtime_ms * 1000000u, t0, t1, t2 = origin;
	for (;;) {
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
		if (record(&run, t0 - origin, t1 - t0, t2 - t1) < 0)
			return out_of_memory(run.write.n);
		ios++;
		if (out >= 0) {
			put_le64(chunk + fill * 24, t0 - origin);
			put_le64(chunk + fill * 24 + 8, t1 - t0);
			put_le64(chunk + fill * 24 + 16, t2 - t1);
			if (++fill == CHUNK) {
				if (write_all(out, chunk, sizeof(chunk)) < 0)
					goto samples_failed;
				fill = 0;
			}
		}
		if (o.max_bytes && ios * size >= o.max_bytes)
			break;
		if (t2 < deadline)
			continue;
		uint64_t more = o.precision > 0 ? more_ns(&run, o.precision, t2 - origin, max_ns) : 0;
		if (more == 0)
			break;
		rounds++;
		uint64_t t3 = now_ns();
		origin += t3 - t2; /* the check is not engine time */
		deadline = t3 + more;
	}
	if (out >= 0 && (write_all(out, chunk, fill * 24) < 0 || close(out) < 0))
		goto samples_failed;
	close(fd);
	printf("pairbench %d ios=%" PRIu64 " elapsed_ns=%" PRIu64 " bytes=%" PRIu64 " flush=%s rounds=%" PRIu64 "\n",
	       PAIRBENCH_VERSION, ios, t2 - origin, ios * size, flush_kind, rounds);
	return print_summaries(&run, t2 - origin) < 0 ? out_of_memory(run.write.n) : 0;
samples_failed:
	fprintf(stderr, "pairbench: cannot write the samples to %s: %s\n", samples, strerror(errno));
	return 1;
}
