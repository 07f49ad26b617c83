"""udev's own probes of a block device are not users of it (device/linux_safety.transient_prober): udevd or its
worker itself, and a program a worker runs for the event (ata_id, scsi_id, blkid) — the lab's sweep of a disk a
destroyed pool had just released was refused over "pid 3775 (ata_id)". Anything else holding the device is a user.
The /proc files are laid out as Linux writes them (stat: `pid (comm) state ppid ...`)."""

from slogqual.device.linux_safety import transient_prober


def proc(tmp_path, procs):
    for pid, (comm, ppid) in procs.items():
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "comm").write_text(comm + "\n")
        (d / "stat").write_text(f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 118 0 0 0 0 0 0 0 20 0 1 0\n")
    return str(tmp_path)


def test_udev_and_the_programs_its_workers_run_are_transient_anything_else_is_a_user(tmp_path):
    root = proc(tmp_path, {300: ("systemd-udevd", 1), 3770: ("(udev-worker)", 300), 3775: ("ata_id", 3770),
                           3790: ("blkid", 3770), 4000: ("fio", 3999), 3999: ("bash", 1),
                           4100: ("my (odd) tool", 1)})
    assert transient_prober("300", root) and transient_prober("3770", root)
    assert transient_prober("3775", root) and transient_prober("3790", root)
    assert not transient_prober("4000", root) and not transient_prober("3999", root)
    assert not transient_prober("4100", root)  # a comm with parentheses: the ppid is read after the last ')'
    assert not transient_prober("5555", root)  # gone already: not a prober, and no error
