"""The power-cut test (docs/powercut.md): the record format, the writer, the recorder, verify and the
run. Its limits, checked before anything is created or written (issue #28):"""

MAX_CYCLES = 1000  # power cuts in one run: far above the few a test runs, each a real cut (minutes on hardware)
MIN_EMULATED_SIZE = 1 << 20  # a backing file --emulate creates: 1 MiB holds the records before any cut …
MAX_EMULATED_SIZE = 1 << 40  # … 1 TiB, a sparse file any filesystem slogqual runs on takes (ext4: 16 TiB)
