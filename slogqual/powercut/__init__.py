"""The power-cut test (docs/powercut.md): the record format, the writer, the recorder, verify and the
run."""
