"""The advisor check's pool (a scenario TOML): one LUN of 256M, sync=always with the candidate as a single log, at a
configuration's writers — the pool guest_job.py runs after its advice, and cpu_parts.py beside its probes. iSCSI-like
is a zvol of volblocksize 16K with plain writes (sync=always makes them sync); NFS-like a dataset of recordsize 128K
with O_DSYNC writes."""


def text(c, runtime, ramp, prefix="check"):
    """The TOML of configuration ``c`` (run.py's draw(): name, protocol, bs, threads)."""
    nfs = c["protocol"] == "nfs"
    return (f'name = "{prefix}-{c["name"]}"\nkind = "{"dataset" if nfs else "zvol"}"\nluns = 1\nlun_size = "256M"\n'
            f'{"recordsize" if nfs else "volblocksize"} = "{"128k" if nfs else "16k"}"\nrw = "randwrite"\n'
            f'bs = "{c["bs"]}"\nwrite_sync = "{"dsync" if nfs else "none"}"\n'
            f'threads = [{", ".join(map(str, c["threads"]))}]\nruntime = {runtime}\nramp = {ramp}\n'
            '\n[[config]]\nname = "sync=always + SLOG"\nsync = "always"\nlog = "single"\n')
