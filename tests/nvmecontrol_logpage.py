"""``nvmecontrol logpage -p 2`` text for the tests, printed the way FreeBSD's nvmecontrol prints it, because no
real capture of it was found (tests/fixtures/freebsd/SOURCES.md says where it was looked for).

The format strings below are print_log_health()'s and print_temp()'s own, copied from freebsd/freebsd-src
sbin/nvmecontrol/logpage.c (commit 5dc463f9; the libxo version of 2023 emits the same text), with C's
arithmetic kept: ``(float)t * 9 / 5`` is single precision there. Only their layout is reproduced: every
number printed comes from a real capture of the same SMART/Health log page by another tool (the pages
below, each naming its capture), so the parser is checked against what nvme-cli and smartctl read from
those very pages. ``with_transitions=False, sensors=7`` is logpage.c before 2019 (commit 01b48d45: seven
sensors, no thermal management lines), the nvmecontrol of FreeBSD 12.0.
"""

import json
import struct

from conftest import read_fixture

NVME_CRIT_WARN_ST_AVAILABLE_SPARE = 0x1  # sys/dev/nvme/nvme.h
NVME_CRIT_WARN_ST_TEMPERATURE = 0x2
NVME_CRIT_WARN_ST_DEVICE_RELIABILITY = 0x4
NVME_CRIT_WARN_ST_READ_ONLY = 0x8
NVME_CRIT_WARN_ST_VOLATILE_MEMORY_BACKUP = 0x10


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _c_int(u32: int) -> int:
    """What printf's %d shows of an unsigned 32-bit field."""
    return u32 - (1 << 32) if u32 >= 1 << 31 else u32


def print_temp(t: int) -> str:
    return "%u K, %2.2f C, %3.2f F\n" % (t, float(t) - 273.15, _f32(_f32(_f32(t) * 9) / 5) - 459.67)


def print_log_health(page: dict, with_transitions: bool = True, sensors: int = 8) -> str:
    warning = page["critical_warning"]
    out = ["SMART/Health Information Log\n", "============================\n",
           "Critical Warning State:         0x%02x\n" % warning,
           " Available spare:               %d\n" % bool(warning & NVME_CRIT_WARN_ST_AVAILABLE_SPARE),
           " Temperature:                   %d\n" % bool(warning & NVME_CRIT_WARN_ST_TEMPERATURE),
           " Device reliability:            %d\n" % bool(warning & NVME_CRIT_WARN_ST_DEVICE_RELIABILITY),
           " Read only:                     %d\n" % bool(warning & NVME_CRIT_WARN_ST_READ_ONLY),
           " Volatile memory backup:        %d\n" % bool(warning & NVME_CRIT_WARN_ST_VOLATILE_MEMORY_BACKUP),
           "Temperature:                    " + print_temp(page["temperature"]),
           "Available spare:                %u\n" % page["available_spare"],
           "Available spare threshold:      %u\n" % page["available_spare_threshold"],
           "Percentage used:                %u\n" % page["percentage_used"],
           "Data units (512,000 byte) read: %s\n" % page["data_units_read"],
           "Data units written:             %s\n" % page["data_units_written"],
           "Host read commands:             %s\n" % page["host_read_commands"],
           "Host write commands:            %s\n" % page["host_write_commands"],
           "Controller busy time (minutes): %s\n" % page["controller_busy_time"],
           "Power cycles:                   %s\n" % page["power_cycles"],
           "Power on hours:                 %s\n" % page["power_on_hours"],
           "Unsafe shutdowns:               %s\n" % page["unsafe_shutdowns"],
           "Media errors:                   %s\n" % page["media_errors"],
           "No. error info log entries:     %s\n" % page["num_error_info_log_entries"],
           "Warning Temp Composite Time:    %d\n" % _c_int(page["warning_temp_time"]),
           "Error Temp Composite Time:      %d\n" % _c_int(page["error_temp_time"])]
    for i, t in enumerate(page["temp_sensor"][:sensors]):
        if t == 0:
            continue
        out.append("Temperature Sensor %d:           " % (i + 1) + print_temp(t))
    if with_transitions:
        out += ["Temperature 1 Transition Count: %d\n" % _c_int(page["tmt1tc"]),
                "Temperature 2 Transition Count: %d\n" % _c_int(page["tmt2tc"]),
                "Total Time For Temperature 1:   %d\n" % _c_int(page["ttftmt1"]),
                "Total Time For Temperature 2:   %d\n" % _c_int(page["ttftmt2"])]
    return "".join(out)


# The log page of the Samsung PM991a of tests/fixtures/nvme/smart-log-samsung-pm991a.txt (nvme-cli 2.x), every
# value as that capture shows it; nvme-cli printed the Kelvin figures (306 K) beside the Celsius ones.
PM991A = {
    "critical_warning": 0, "temperature": 306, "available_spare": 100, "available_spare_threshold": 50,
    "percentage_used": 0, "data_units_read": 462760, "data_units_written": 580601,
    "host_read_commands": 1806550, "host_write_commands": 1828791, "controller_busy_time": 22,
    "power_cycles": 108, "power_on_hours": 6, "unsafe_shutdowns": 69, "media_errors": 0,
    "num_error_info_log_entries": 0, "warning_temp_time": 0, "error_temp_time": 0,
    "temp_sensor": [306, 0, 0, 0, 0, 0, 0, 0], "tmt1tc": 718, "tmt2tc": 2, "ttftmt1": 1476, "ttftmt2": 0,
}


def teamgroup_mp33() -> dict:
    """The log page of the TEAMGROUP MP33 in tests/fixtures/smartctl/nvme-teamgroup-mp33-tm8fp6256g-7.5-freebsd.json
    (smartctl 7.5 on FreeBSD 14.3, /dev/nvme0), from its nvme_smart_health_information_log. smartctl gives the
    composite temperature as Kelvin less 273 and leaves out sensors that read 0 (it listed none). Its JSON
    has no thermal management counters, so only the older layout, which has none either, can be printed."""
    doc = json.loads(read_fixture("smartctl", "nvme-teamgroup-mp33-tm8fp6256g-7.5-freebsd.json"))
    log = doc["nvme_smart_health_information_log"]
    return {
        "critical_warning": log["critical_warning"], "temperature": log["temperature"] + 273,
        "available_spare": log["available_spare"], "available_spare_threshold": log["available_spare_threshold"],
        "percentage_used": log["percentage_used"], "data_units_read": log["data_units_read"],
        "data_units_written": log["data_units_written"], "host_read_commands": log["host_reads"],
        "host_write_commands": log["host_writes"], "controller_busy_time": log["controller_busy_time"],
        "power_cycles": log["power_cycles"], "power_on_hours": log["power_on_hours"],
        "unsafe_shutdowns": log["unsafe_shutdowns"], "media_errors": log["media_errors"],
        "num_error_info_log_entries": log["num_err_log_entries"], "warning_temp_time": log["warning_temp_time"],
        "error_temp_time": log["critical_comp_time"], "temp_sensor": [0] * 8,
    }


def printed_pages() -> list:
    """Every page above as nvmecontrol would print it (the parser fuzzing's seeds)."""
    return [print_log_health(PM991A), print_log_health(teamgroup_mp33(), with_transitions=False, sensors=7)]
