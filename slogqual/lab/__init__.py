"""The slogqual lab: a QEMU guest with real OpenZFS and emulated device classes (docs/lab.md)."""
